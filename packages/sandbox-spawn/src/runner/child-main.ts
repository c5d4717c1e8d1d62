import type { ExecutionRequest } from "@suaveplan/sandbox-guest";
import { createFdSink } from "./fd-sink.js";
import { parseRunnerInput } from "./parse-runner-input.js";
import { PROTOCOL_FD } from "./protocol.js";
import { prepareRealm, runRequest, warmUp } from "./run-request.js";

/**
 * The child's main: warm up, read one request from stdin, run it with its
 * frames on fd 3, exit. An empty stdin (a spare child that was never used)
 * exits quietly.
 */
export async function main(): Promise<void> {
  await warmUp();
  // Made while the child waits: the request's context costs nothing on the caller's path.
  const prepared = prepareRealm();
  const text = await readRequest();
  if (text.trim() === "") process.exit(0);
  const sink = createFdSink(PROTOCOL_FD);
  let request: ExecutionRequest;
  try {
    request = parseRunnerInput(text);
  } catch (error) {
    const message = `The runner refused the request: ${error instanceof Error ? error.message : String(error)}`;
    sink.write({ type: "done", outcome: { kind: "fault", message }, memoryUsed: undefined });
    process.exit(0);
  }
  await runRequest(request, sink, prepared);
  process.exit(0);
}

/**
 * The request: everything up to the first newline (the engine ends its JSON
 * with one, so the runner need not wait for end-of-file), or up to EOF.
 */
function readRequest(): Promise<string> {
  return new Promise((resolve) => {
    const stdin = process.stdin;
    const chunks: string[] = [];
    const done = (): void => {
      stdin.off("data", onData);
      stdin.off("end", done);
      stdin.pause();
      const text = chunks.join("");
      const newline = text.indexOf("\n");
      resolve(newline === -1 ? text : text.slice(0, newline));
    };
    const onData = (chunk: string): void => {
      chunks.push(chunk);
      if (chunk.includes("\n")) done();
    };
    stdin.setEncoding("utf8");
    stdin.on("data", onData);
    stdin.on("end", done);
  });
}
