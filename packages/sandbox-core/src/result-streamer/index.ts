export {
  type PushableChunk,
  ResultStreamer,
  type ResultStreamerOptions,
  type StreamChunk,
  type StreamCompleteChunk,
  type StreamErrorChunk,
  type StreamListener,
  type StreamLogChunk,
  type StreamResultChunk,
} from "./result-streamer.js";
