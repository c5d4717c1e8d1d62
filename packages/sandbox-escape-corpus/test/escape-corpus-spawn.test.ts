import { describeEngineCorpus } from "./support/corpus-suite.js";

// The shared escape corpus against the spawn engine (see src/escape-techniques.ts for the sources).
describeEngineCorpus("spawn");
