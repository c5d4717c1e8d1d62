import { describeEngineCorpus } from "./support/corpus-suite.js";

// The shared escape corpus against the isolate engine (see src/escape-techniques.ts for the sources).
describeEngineCorpus("isolate");
