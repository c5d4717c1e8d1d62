import { LocalSandboxProvider } from "@suaveplan/dsh-sandbox-local";
import { runEngineConformance } from "@suaveplan/sandbox-core/testing";
import { afterAll, describe, it } from "vitest";
import { SpawnEngine } from "../src/index.js";

// The shared conformance suite, parity table included, on the confined tier: every child inside
// bwrap or Landlock (read-only, network cut). Real children running the built runner.
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
else
  describe.skip("spawn (confined): no backend that enforces fully here", () =>
    it("skipped", () => undefined));
