import { corpusConfinement } from "../src/corpus-runner.js";
import { describeEngineCorpus } from "./support/corpus-suite.js";

// The shared escape corpus against the confined spawn tier: SpawnEngine with a dsh-sandbox-local
// provider (read-only, network cut) — the same child as spawn, inside bwrap or Landlock.
const provider = corpusConfinement();
const usable = (() => {
  try {
    return provider.selectedBackend().enforcement === "full";
  } catch {
    return false;
  } finally {
    provider.dispose();
  }
})();

// Opt-in (SUAVEPLAN_CONFINED_CORPUS=1; `pnpm security:report` sets it) for now: it passes on
// Node 20 and 22, but on Node 24 one CI run saw the facade column's off-heap memory bomb end `ok`
// (256 MiB of array buffers not stopped in a confined child; issue 14, being investigated).
describeEngineCorpus("spawn-confined", { skip: !usable || process.env.SUAVEPLAN_CONFINED_CORPUS !== "1" });
