import type { LocalBackend, LocalBackendName } from "../backend/local-backend.js";
import { createBwrapBackend } from "../bwrap/bwrap-backend.js";
import type { LocalHost } from "../host/local-host.js";
import { createLandlockBackend, createLayeredBackend } from "../landlock/index.js";
import { createSeatbeltBackend } from "../seatbelt/seatbelt-backend.js";
import { createWindowsAclBackend } from "../windows-acl/windows-acl-backend.js";

/** What a backend factory receives from the provider. */
export interface LocalBackendContext {
  /** The host seam (real by default). */
  host: LocalHost;
  /** The bwrap executable the operator configured, if any. */
  bwrapPath: string | undefined;
  /** The Landlock launcher the operator configured, if any. */
  landlockLauncherPath: string | undefined;
  /** The Seatbelt runner the operator configured, if any (default `/usr/bin/sandbox-exec`). */
  sandboxExecPath: string | undefined;
  /** The Windows restricted-token launcher the operator configured, if any. */
  windowsLauncherPath: string | undefined;
}

/** Builds one backend for a provider. */
export type LocalBackendFactory = (context: LocalBackendContext) => LocalBackend;

/**
 * The built-in backend factories. A provider's `registry` option overrides
 * entries (e.g. to inject a different Landlock build).
 *
 * Landlock entries: `landlock` and `landlock+bwrap` come from
 * `src/landlock/index.ts` (`createLandlockBackend`, `createLayeredBackend`).
 */
export const DEFAULT_BACKEND_FACTORIES: Readonly<Record<LocalBackendName, LocalBackendFactory>> =
  Object.freeze({
    bwrap: (ctx: LocalBackendContext) =>
      createBwrapBackend({
        host: ctx.host,
        bwrapPath: ctx.bwrapPath,
        ...(ctx.landlockLauncherPath === undefined ? {} : { launcherPath: ctx.landlockLauncherPath }),
      }),
    landlock: (ctx: LocalBackendContext) =>
      createLandlockBackend(
        ctx.landlockLauncherPath === undefined ? {} : { launcherPath: ctx.landlockLauncherPath },
      ),
    "landlock+bwrap": (ctx: LocalBackendContext) =>
      createLayeredBackend({
        ...(ctx.landlockLauncherPath === undefined ? {} : { launcherPath: ctx.landlockLauncherPath }),
        ...(ctx.bwrapPath === undefined ? {} : { bwrapPath: ctx.bwrapPath }),
      }),
    seatbelt: (ctx: LocalBackendContext) =>
      createSeatbeltBackend({ host: ctx.host, sandboxExecPath: ctx.sandboxExecPath }),
    "windows-acl": (ctx: LocalBackendContext) =>
      createWindowsAclBackend({ host: ctx.host, launcherPath: ctx.windowsLauncherPath }),
  });

/** The backend preference of a platform when the operator names none. */
export function defaultBackendsFor(platform: NodeJS.Platform): readonly LocalBackendName[] {
  switch (platform) {
    case "linux":
      return ["bwrap", "landlock+bwrap", "landlock"];
    case "darwin":
      return ["seatbelt"];
    case "win32":
      return ["windows-acl"];
    default:
      return ["bwrap", "landlock+bwrap", "landlock", "seatbelt", "windows-acl"];
  }
}
