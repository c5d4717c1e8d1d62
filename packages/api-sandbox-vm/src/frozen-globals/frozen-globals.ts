/**
 * The FrozenGlobals allowlist: the only non-ECMAScript globals a plugin sees. All are guest-realm
 * implementations (nothing is a host object): `URL`, `URLSearchParams`, `TextEncoder`,
 * `TextDecoder`, `structuredClone`, `console` (routed to `onLog`) and `crypto`
 * (`getRandomValues`, `randomUUID`, `subtle.digest`). `fs` and `fetch` are added by
 * `installCapabilityProxies` when configured. Everything else — `process`, `Buffer`, `require`,
 * host `fetch`, timers, `WebAssembly`, `SharedArrayBuffer`, `Atomics`, `FinalizationRegistry` — is absent.
 */
export const FROZEN_GLOBALS = Object.freeze([
  "URL",
  "URLSearchParams",
  "TextEncoder",
  "TextDecoder",
  "structuredClone",
  "console",
  "crypto",
] as const);

/** One name of {@link FROZEN_GLOBALS}. */
export type FrozenGlobalName = (typeof FROZEN_GLOBALS)[number];
