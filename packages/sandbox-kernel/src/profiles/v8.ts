import { installCodec } from "../codec/install-codec.js";
import type { KernelPart } from "../create-kernel.js";
import { installCalls } from "../parts/install-calls.js";
import { installCodeGeneration } from "../parts/install-code-generation.js";
import { installConsole } from "../parts/install-console.js";
import { installErrors } from "../parts/install-errors.js";
import { installHardening } from "../parts/install-hardening.js";
import { installInspect } from "../parts/install-inspect.js";
import { installRealm } from "../parts/install-realm.js";
import { installSettle } from "../parts/install-settle.js";
import { installTimers } from "../parts/install-timers.js";
import { installUrl } from "../parts/install-url.js";
import { installWebGlobals } from "../parts/install-web-globals.js";

/**
 * The `v8` profile's parts, in install order: for realms whose engine has V8's stack-trace
 * API (`Error.prepareStackTrace` with call sites, `Error.captureStackTrace`) — V8 itself and
 * QuickJS-ng, which implements it.
 */
export const V8_PARTS: readonly KernelPart[] = Object.freeze([
  installRealm,
  // Before the codec and inspect: an Error they make while installing is formatted by the
  // kernel's own prepareStackTrace, not by a call out to the host's.
  installErrors,
  installCodec,
  installInspect,
  installConsole,
  installTimers,
  installWebGlobals,
  installUrl,
  installCalls,
  installSettle,
  // After settle, which keeps the realm's own eval for its `evaluate` entry.
  installCodeGeneration,
  installHardening,
]);
