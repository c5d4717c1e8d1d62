// The reusable escape suite against the bubblewrap backend: real bwrap, real
// processes, host-side checks. Runs wherever bwrap probes as usable (CI
// installs bubblewrap); elsewhere the suite is skipped with the probe's reason.
import { LocalSandboxProvider } from "../src/index.js";
import { describeEscapeSuite } from "./support/escape-suite.js";

const probe = new LocalSandboxProvider({ backends: ["bwrap"] }).probe()[0];

describeEscapeSuite({
  name: "bwrap",
  skip: probe?.available === true ? false : `bwrap is not usable here: ${probe?.reason ?? "not probed"}`,
  createProvider: () => new LocalSandboxProvider({ backends: ["bwrap"] }),
  disposeProvider: (provider) => (provider as LocalSandboxProvider).dispose(),
});
