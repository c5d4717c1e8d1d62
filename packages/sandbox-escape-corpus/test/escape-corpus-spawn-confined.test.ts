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

// A Node 24 CI run once saw the facade column's off-heap bomb end `ok` here: 256 MiB of array
// buffers, most likely allocated between two of the host's memory samples (not reproduced since,
// even under load). A run the runner finishes is now also held to the runner's kernel memory
// peak (the done frame's `peakBytes`), which no sampling gap can miss.
describeEngineCorpus("spawn-confined", { skip: !usable });
