import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** File name of the compiled launcher inside the package's `dist/`. */
const LAUNCHER_FILE = "landlock-launcher";
/** Written beside the launcher by `scripts/build-launcher.mjs` when compiling failed. */
const BUILD_ERROR_SUFFIX = ".build-error.txt";

/**
 * Where the compiled Landlock launcher lives: `dist/landlock-launcher` of this
 * package. From the built bundle that is beside the module; from source (tests,
 * `@suaveplan/source`) it is the package's `dist/`. Returns the expected path
 * even when the launcher was not built (the probe then says why).
 */
export function landlockLauncherPath(): string {
  const candidates = [
    new URL(`./${LAUNCHER_FILE}`, import.meta.url),
    new URL(`../../dist/${LAUNCHER_FILE}`, import.meta.url),
  ].map((url) => fileURLToPath(url));
  const primary = import.meta.url.endsWith(".ts") ? candidates[1] : candidates[0];
  return candidates.find((candidate) => existsSync(candidate)) ?? (primary as string);
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
