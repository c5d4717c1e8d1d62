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

// A Node 24 CI run once saw the facade column's off-heap bomb end `ok` here (256 MiB of array
// buffers allocated between two of the host's memory samples); a run that ends with a value is
// now also held to the runner's peak resident memory (the done frame's `peakBytes`).
describeEngineCorpus("spawn-confined", { skip: !usable });
