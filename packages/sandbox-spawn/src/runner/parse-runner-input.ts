import { type ExecutionRequest, readExecutionRequest } from "@suaveplan/sandbox-guest/realm";

/**
 * Read the `ExecutionRequest` the runner got on stdin (one JSON object),
 * checked by sandbox-guest's `readExecutionRequest`. Throws a plain `Error`
 * naming the first bad field; the runner reports it as a `fault`, so the host
 * sees `SANDBOX_SPAWN_FAILED`.
 */
export function parseRunnerInput(text: string): ExecutionRequest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error("request: stdin is not one JSON object");
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new Error("request: stdin is not one JSON object");
  return readExecutionRequest(raw);
}
