import type { CallReply, DriverEvent, ExecutionRequest } from "@suaveplan/sandbox-guest";

/**
 * What the worker entry posts to the host: `ready` once it has booted (the
 * host then sends one `run`), then the shared driver's events — `log` lines
 * and `call`s (guest→host calls, answered by a `reply`) while the guest runs,
 * and one `done` with the outcome and usage. Internal: never exported from
 * the package.
 */
export type WorkerMessage = { type: "ready" } | DriverEvent;

/**
 * What the host posts to the worker entry: the one `run` request, then a
 * `reply` for each `call` it answered. A reply that arrives after the run
 * ended is dropped by the driver. Internal: never exported from the package.
 */
export type HostMessage =
  | {
      type: "run";
      request: ExecutionRequest;
      /** The run's memory budget (heap and off-heap), in bytes: the entry samples the isolate against it. */
      memoryLimit: number;
    }
  | { type: "reply"; reply: CallReply };
