// The same escape suite through LocalSandboxProvider's registry against the
// Landlock backends (their own suites live in landlock-*.test.ts). Skipped
// where the launcher or the kernel cannot run them.
import { LocalSandboxProvider } from "../src/index.js";
import { describeEscapeSuite } from "./support/escape-suite.js";

const [layered, landlock] = new LocalSandboxProvider({ backends: ["landlock+bwrap", "landlock"] }).probe();
const skipReason = (p: typeof layered): string | false =>
  p?.available === true ? false : `not usable here: ${p?.reason ?? "not probed"}`;

describeEscapeSuite({
  name: "landlock+bwrap",
  skip: skipReason(layered),
  controls: false,
  createProvider: () => new LocalSandboxProvider({ backends: ["landlock+bwrap"] }),
  disposeProvider: (provider) => (provider as LocalSandboxProvider).dispose(),
});

describeEscapeSuite({
  name: "landlock",
  skip: skipReason(landlock),
  controls: false,
  modes: ["read-only"],
  createProvider: () => new LocalSandboxProvider({ backends: ["landlock"] }),
  disposeProvider: (provider) => (provider as LocalSandboxProvider).dispose(),
});

// Plain Landlock cannot keep sub-paths of a writable root read-only (the
// provider refuses such a policy), so its workspace-write run drops the
// protected paths and lists what Landlock does not govern.
describeEscapeSuite({
  name: "landlock (no protected paths)",
  skip: skipReason(landlock),
  controls: false,
  modes: ["workspace-write"],
  createProvider: () => new LocalSandboxProvider({ backends: ["landlock"], protectedPaths: [] }),
  disposeProvider: (provider) => (provider as LocalSandboxProvider).dispose(),
  knownGaps: {
    "chmod-chown-touch-outside-file":
      "Landlock has no chmod/chown/utimes rights; enforcement is reported partial",
    "umount-protected-bind": "no protected paths without bwrap",
    "write-protected-paths": "no protected paths without bwrap",
    "rename-protected-parent": "no protected paths without bwrap",
  },
});
