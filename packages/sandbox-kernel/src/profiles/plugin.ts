import { installCodec } from "../codec/install-codec.js";
import type { KernelPart } from "../create-kernel.js";
import { installErrors } from "../parts/install-errors.js";
import { installInspect } from "../parts/install-inspect.js";
import { installGuestCapabilities } from "../plugin/guest-capabilities.js";
import { installGuestCodec } from "../plugin/guest-codec.js";
import { installGuestCryptoAndConsole } from "../plugin/guest-crypto-console.js";
import { installGuestDynamicCode } from "../plugin/guest-dynamic-code.js";
import { installGuestErrors } from "../plugin/guest-errors.js";
import { installGuestHostApi } from "../plugin/guest-host-api.js";
import { installGuestKit } from "../plugin/guest-kit.js";
import { installGuestLockdown } from "../plugin/guest-lockdown.js";
import { installGuestText } from "../plugin/guest-text.js";
import { installGuestUrl } from "../plugin/guest-url.js";

/**
 * The `plugin` profile's parts, in install order: the guest runtime of the plugin host
 * (`@suaveplan/api-sandbox-vm`), a long-lived module host that takes many calls rather than one
 * execution. Bundled into its own file (`@suaveplan/sandbox-kernel/sources/plugin`), so the
 * script every engine imports does not carry it. Its parts are still the plugin host's own
 * (`src/plugin/`); they move onto the shared ones (codec, inspect, console, calls) one at a time.
 */
export const PLUGIN_PARTS: readonly KernelPart[] = Object.freeze([
  installGuestKit,
  installGuestErrors,
  installErrors,
  installCodec,
  installGuestCodec,
  installInspect,
  installGuestText,
  installGuestUrl,
  installGuestCryptoAndConsole,
  installGuestCapabilities,
  installGuestDynamicCode,
  installGuestLockdown,
  installGuestHostApi,
]);
