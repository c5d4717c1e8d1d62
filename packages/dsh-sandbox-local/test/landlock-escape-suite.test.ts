// The package's reusable escape suite (test/support/escape-suite.ts) run
// against the Landlock backends through a minimal provider adapter: one probe,
// a canonical root, protected .git/hooks and .git/config, a private temp area.
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ConfinedArgv, type SandboxPolicy, SandboxProvider } from "@suaveplan/dsh-sandbox";
import type { BackendProbeResult, LocalBackend } from "../src/backend/index.js";
import { createLandlockBackend, createLayeredBackend } from "../src/landlock/index.js";
import { buildLauncherInto } from "./landlock-harness.js";
import { describeEscapeSuite, type EscapeTechniqueId } from "./support/escape-suite.js";

const buildDir = mkdtempSync(join(tmpdir(), "landlock-launcher-"));
const launcherPath = buildLauncherInto(buildDir);
process.once("exit", () => rmSync(buildDir, { recursive: true, force: true }));

/** A single-backend provider, enough to drive the suite (the package's real provider does more). */
class BackendProvider extends SandboxProvider {
  readonly #backend: LocalBackend;
  readonly #probe: BackendProbeResult;
  readonly #protect: boolean;

  constructor(backend: LocalBackend, protect: boolean) {
    super();
    this.#backend = backend;
    this.#probe = backend.probe();
    this.#protect = protect;
  }

  confine(argv: readonly string[], policy: SandboxPolicy): ConfinedArgv {
    this.assertConfinedPolicy(policy);
    const workspaceRoot = realpathSync(policy.workspaceRoot);
    const protectedPaths = this.#protect
      ? [join(workspaceRoot, ".git", "hooks"), join(workspaceRoot, ".git", "config")].filter((p) =>
          existsSync(p),
        )
      : [];
    const tempDir =
      policy.mode === "workspace-write"
        ? realpathSync(mkdtempSync(join(tmpdir(), "landlock-tmp-")))
        : undefined;
    try {
      const confined = this.#backend.wrap(
        argv,
        { mode: policy.mode, workspaceRoot, network: "allow", protectedPaths, tempDir },
        this.#probe,
      );
      let disposed = false;
      return {
        ...confined,
        dispose: () => {
          if (disposed || tempDir === undefined) return;
          disposed = true;
          rmSync(tempDir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
      throw error;
    }
  }
}

const LANDLOCK_CANNOT_SUBTRACT =
  "Landlock cannot take a sub-path back out of a writable root, so plain landlock refuses protected paths (use landlock+bwrap)";
const LANDLOCK_NO_METADATA_RIGHTS =
  "Landlock has no chmod/utimes rights; workspace-write is reported as partial enforcement";

// Plain Landlock, read-only: protected paths are read-only like everything else.
describeEscapeSuite({
  name: "landlock",
  createProvider: () => new BackendProvider(createLandlockBackend({ launcherPath }), true),
  modes: ["read-only"],
  controls: false,
});

// Plain Landlock, workspace-write: the workspace (and so .git) is writable; what
// the backend cannot close is listed, and the backend reports it as partial.
const workspaceWriteGaps: Partial<Record<EscapeTechniqueId, string>> = {
  "chmod-chown-touch-outside-file": LANDLOCK_NO_METADATA_RIGHTS,
  "umount-protected-bind": LANDLOCK_CANNOT_SUBTRACT,
  "write-protected-paths": LANDLOCK_CANNOT_SUBTRACT,
  "rename-protected-parent": LANDLOCK_CANNOT_SUBTRACT,
  "unshare-userns-then-remount": `${LANDLOCK_CANNOT_SUBTRACT}; its outside-file half is covered in landlock-escape.test.ts`,
};
describeEscapeSuite({
  name: "landlock",
  createProvider: () => new BackendProvider(createLandlockBackend({ launcherPath }), false),
  modes: ["workspace-write"],
  knownGaps: workspaceWriteGaps,
  controls: false,
});

// Landlock inside bwrap: every technique, both modes.
describeEscapeSuite({
  name: "landlock+bwrap",
  createProvider: () => new BackendProvider(createLayeredBackend({ launcherPath }), true),
  controls: false,
});
