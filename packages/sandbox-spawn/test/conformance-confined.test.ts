import { LocalSandboxProvider } from "@suaveplan/dsh-sandbox-local";
import { runEngineConformance } from "@suaveplan/sandbox-core/testing";
import { afterAll, describe, it } from "vitest";
import { SpawnEngine } from "../src/index.js";

// The shared conformance suite, parity table included, on the confined tier: every child inside
// bwrap or Landlock (read-only, network cut). Real children running the built runner.
//
// Opt-in (SUAVEPLAN_CONFINED_CONFORMANCE=1) for now: it passes (96 checks, three times on Node 20,
// once on Node 22), but one CI run on Node 22 saw `destroy()` wait forever after the yielding
// Wasm memory bomb — a confined child whose process tree did not close (issue 14, being fixed).
const wanted = process.env.SUAVEPLAN_CONFINED_CONFORMANCE === "1";
const provider = new LocalSandboxProvider({ network: "deny" });
const usable = (() => {
  try {
    return provider.selectedBackend().enforcement === "full";
  } catch {
    return false;
  }
})();
afterAll(() => provider.dispose());

if (wanted && usable)
  runEngineConformance("spawn (confined)", (limits) => new SpawnEngine({ ...limits, confinement: provider }));
else
  describe.skip("spawn (confined): set SUAVEPLAN_CONFINED_CONFORMANCE=1 where a backend enforces fully", () =>
    it("skipped", () => undefined));
