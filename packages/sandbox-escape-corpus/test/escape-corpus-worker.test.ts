import { describeEngineCorpus } from "./support/corpus-suite.js";

// The shared escape corpus against the worker engine (see src/escape-techniques.ts for the sources).
describeEngineCorpus("worker");
