import type { CallReply, DriverEvent, ExecutionRequest } from "@suaveplan/sandbox-guest/realm";

/**
 * What the engine sends the isolate helper process, over its IPC channel
 * (JSON, ordered): `init` once, right after the spawn; then per execution
 * `id` a `run`, a `reply` for each `call` it answered and an `abort` when
 * the engine ended the run itself (cancelled, destroyed, backstop); `reset`
 * drops the helper's warm isolates.
 *
 * @internal
 */
export type ToHelper =
  | { type: "init"; maxIdleIsolates: number }
  | { type: "run"; id: number; request: ExecutionRequest; memoryLimitMiB: number }
  | { type: "reply"; id: number; reply: CallReply }
  | { type: "abort"; id: number }
  | { type: "reset" };

/**
 * What the helper sends back: `ready` once it listens; per execution the
 * shared driver's events in the order they happened (`log`, `call`, then one
 * `done`), or `refused` when no isolate could be created for it (isolated-vm
 * missing or broken: `code` and `message` of the `SandboxError`).
 *
 * @internal
 */
export type FromHelper =
  | { type: "ready" }
  | { type: "event"; id: number; event: DriverEvent }
  | { type: "refused"; id: number; code: string; message: string };
