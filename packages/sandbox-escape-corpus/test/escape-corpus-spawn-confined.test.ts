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

describeEngineCorpus("spawn-confined", { skip: !usable });
