// Runner: the child-process entry of SpawnEngine (pure helpers; the spawned script is `./runner-main`).

// Protocol
export {
  LOG_LEVELS,
  maxLogLines,
  PROTOCOL_FD,
  type RunnerErrorKind,
  type RunnerFrame,
  type RunnerInput,
  type RunnerModule,
  type RunnerOutput,
  SELF_DEADLINE_GRACE_MS,
} from "./protocol.js";
export {
  createFdSink,
  DEFAULT_MAX_OUTPUT_BYTES,
  type FrameSink,
  MAX_ERROR_LENGTH,
  main,
  type PreparedRunner,
  parseRunnerInput,
  prepareRunner,
  warmUp,
} from "./runner.js";
