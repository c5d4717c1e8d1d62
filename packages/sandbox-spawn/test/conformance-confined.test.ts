import { LocalSandboxProvider } from "@suaveplan/dsh-sandbox-local";
import { runEngineConformance } from "@suaveplan/sandbox-core/testing";
import { afterAll, describe, it } from "vitest";
import { SpawnEngine } from "../src/index.js";

// The shared conformance suite, parity table included, on the confined tier: every child inside
// bwrap or Landlock (read-only, network cut). Real children running the built runner.
//
// A Node 22 CI run once saw `destroy()` wait forever here after the yielding Wasm memory bomb: a
// confined child whose pipes stayed open (not reproduced since). `destroy()` is now bounded
// (`closeWithin`) and kills the processes the memory sampler saw in the child's tree even after
// they left it.
const provider = new LocalSandboxProvider({ network: "deny" });
const usable = (() => {
  try {
    return provider.selectedBackend().enforcement === "full";
  } catch {
    return false;
  }
})();
afterAll(() => provider.dispose());

if (usable)
  runEngineConformance("spawn (confined)", (limits) => new SpawnEngine({ ...limits, confinement: provider }));
else describe.skip("spawn (confined): no backend here enforces fully", () => it("skipped", () => undefined));
