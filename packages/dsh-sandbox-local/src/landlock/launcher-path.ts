import { readFileSync } from "node:fs";
import { locateLandlockLauncher } from "./launcher-locate.js";

/** Written beside the launcher by `scripts/build-launcher.mjs` when compiling failed. */
const BUILD_ERROR_SUFFIX = ".build-error.txt";

/**
 * Where the Landlock launcher this host uses lives: the package's prebuilt
 * `dist/landlock-launcher` (from the built bundle that is beside the module;
 * from source, the package's `dist/`) when it is executable and built for this
 * CPU and C library; otherwise the path of a launcher the backends compile from
 * the shipped C source on first use, in the user's cache directory
 * (`$XDG_CACHE_HOME/suaveplan-sandbox/`, else `~/.cache/suaveplan-sandbox/`).
 * Returns the path even when nothing is built yet (the probe then says why).
 */
export function landlockLauncherPath(): string {
  return locateLandlockLauncher();
}

/** The compiler error recorded for `launcherPath`, when the build could not produce it. */
export function launcherBuildError(launcherPath: string): string | undefined {
  try {
    const text = readFileSync(`${launcherPath}${BUILD_ERROR_SUFFIX}`, "utf8").trim();
    return text === "" ? undefined : text;
  } catch {
    return undefined;
  }
}
