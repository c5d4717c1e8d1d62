// Runner: the child-process entry of SpawnEngine (its parts; the spawned script is `./runner-main`).

// Child main
export { main } from "./child-main.js";
// Frames
export { createFdSink, type FrameSink } from "./fd-sink.js";
// Request and replies
export { parseCallReply } from "./parse-call-reply.js";
export { parseRunnerInput } from "./parse-runner-input.js";
// Protocol
export { PROTOCOL_FD, type RunnerFrame, SELF_DEADLINE_GRACE_MS } from "./protocol.js";
// Run
export { type RunRequestOptions, runRequest, warmUp } from "./run-request.js";
