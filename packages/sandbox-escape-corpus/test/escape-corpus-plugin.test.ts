import { describePluginCorpus } from "./support/corpus-suite.js";

// The shared escape corpus as plugins of the plugin host (see src/escape-techniques.ts for the sources).
describePluginCorpus();
