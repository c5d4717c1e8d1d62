// Techniques

// The host side
export {
  type CorpusHost,
  createCorpusHost,
  type HostFindings,
  REACHED_MARKER,
  SECRET_NAME,
} from "./corpus-host.js";
// Running
export {
  type CellVerdict,
  CORPUS_LIMITS,
  type CorpusCell,
  type CorpusColumn,
  createEngineCorpusRun,
  type EngineCorpusRun,
  engineProgram,
  PASSING_VERDICTS,
  runPluginCell,
  transformerVerdict,
} from "./corpus-runner.js";
export {
  type CorpusEngine,
  type CorpusTarget,
  type DeclaredGap,
  ESCAPE_TECHNIQUES,
  type EscapeTechnique,
  type ExpectedOutcome,
  type TechniqueKind,
} from "./escape-techniques.js";
export { guestPrelude, type PreludeSettings } from "./guest-prelude.js";
