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
 * script every engine imports does not carry it. Stacks, the value codec and console formatting
 * are the shared parts (`installErrors`, `installCodec`, `installInspect`); the rest
 * (`src/plugin/`) is the plugin host's own: the FrozenGlobals and lockdown, its web globals
 * (Node's `TextEncoder`/`URL` behaviour, `crypto.subtle.digest`), the capability stubs with their
 * host-issued request ids and coded errors, the dynamic-code guards and the host API.
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
