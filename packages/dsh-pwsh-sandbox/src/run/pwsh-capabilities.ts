import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

/** Whether PowerShell can run here: the declared capability tests and callers check. */
export interface PwshCapabilities {
  /** True when a `pwsh` executable was found. */
  available: boolean;
  /** Its absolute path, when found. */
  path?: string;
  /** Why not, in words an operator can act on. */
  reason?: string;
}

/**
 * Look `pwsh` (or the given program) up on `env.PATH`. Does not run it.
 * @param program - a name to find on `PATH`, or an absolute path.
 */
export function pwshCapabilities(program = "pwsh", env: NodeJS.ProcessEnv = process.env): PwshCapabilities {
  const candidates = isAbsolute(program)
    ? [program]
    : (env.PATH ?? "")
        .split(delimiter)
        .filter((dir) => dir !== "")
        .map((dir) => join(dir, program));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return { available: true, path: candidate };
    } catch {
      // not here
    }
  }
  return {
    available: false,
    reason: `PowerShell is not installed: no executable ${JSON.stringify(program)} on PATH (install PowerShell 7, which provides pwsh)`,
  };
}
