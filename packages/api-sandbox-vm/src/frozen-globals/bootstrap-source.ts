import { installGuestCapabilities } from "./guest-capabilities.js";
import { installGuestCodec } from "./guest-codec.js";
import { installGuestCryptoAndConsole } from "./guest-crypto-console.js";
import { installGuestDynamicCode } from "./guest-dynamic-code.js";
import { installGuestErrors } from "./guest-errors.js";
import { createGuestHostApi } from "./guest-host-api.js";
import { installGuestLockdown } from "./guest-lockdown.js";
import { installGuestText } from "./guest-text.js";
import { installGuestUrl } from "./guest-url.js";

/** Identifier prefix of plugin modules; also what `import.meta.url` starts with inside the sandbox. */
export const PLUGIN_URL_PREFIX = "sandbox:/plugin/";

/**
 * The bootstrap script: a strict function expression `(bridge, configJson) => GuestHostApi`
 * evaluated once in the fresh context. It installs the FrozenGlobals, the capability stubs and
 * the dynamic-code guards, locks the realm down, and returns the guest functions the host keeps.
 */
export function buildBootstrapSource(): string {
  const parts = [
    installGuestErrors,
    installGuestCodec,
    installGuestText,
    installGuestUrl,
    installGuestCryptoAndConsole,
    installGuestCapabilities,
    installGuestDynamicCode,
    installGuestLockdown,
  ]
    .map((part) => `  (${part.toString()})(kit);`)
    .join("\n");
  return [
    '"use strict";',
    "(function bootstrap(bridge, configJson) {",
    "  const kit = { bridge, config: JSON.parse(configJson), globals: {}, hidden: [] };",
    parts,
    `  return (${createGuestHostApi.toString()})(kit);`,
    "})",
  ].join("\n");
}
