import { type ExecutionRequest, useKernelScript } from "@suaveplan/sandbox-guest/realm";
import { createLineInbox } from "../internal/line-inbox.js";
import { cpuLimitOf, kernelBindingOf, NO_WARM_UP_FLAG } from "../internal/node-args.js";
import { createFdSink } from "./fd-sink.js";
import { parseCallReply } from "./parse-call-reply.js";
import { parseRunnerInput } from "./parse-runner-input.js";
import { PROTOCOL_FD } from "./protocol.js";
import { prepareRealm, runRequest, warmUp } from "./run-request.js";

/**
 * The child's main: warm up (unless the host said not to), read one request from stdin, run it with its
 * frames on fd 3 while later stdin lines bring the host's replies to its
 * calls, exit. An empty stdin (a spare child that was never used) exits
 * quietly.
 */
export async function main(): Promise<void> {
  // The host names the kernel's binding; without it (a malformed name too) the kernel makes its own.
  const binding = kernelBindingOf(process.argv);
  if (binding !== undefined) useKernelScript({ binding });
  if (!process.argv.includes(NO_WARM_UP_FLAG)) await warmUp();
  // Made while the child waits: the request's context costs nothing on the caller's path.
  const prepared = prepareRealm();
  // The request is the first line (the engine ends its JSON with one, so the runner need not wait for end-of-file).
  const stdin = createLineInbox(process.stdin);
  const text = await stdin.first;
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
  await runRequest(request, sink, {
    prepared,
    cpuLimitSeconds: cpuLimitOf(process.argv),
    replies: (deliver) =>
      stdin.listen((line) => {
        const reply = parseCallReply(line);
        if (reply !== undefined) deliver(reply);
      }),
  });
  process.exit(0);
}
