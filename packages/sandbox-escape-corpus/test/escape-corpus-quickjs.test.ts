import { describeEngineCorpus } from "./support/corpus-suite.js";

// The shared escape corpus against the quickjs engine: QuickJS compiled to WebAssembly, in this
// process (see src/escape-techniques.ts for the sources and quickjs's declared differences).
describeEngineCorpus("quickjs");
