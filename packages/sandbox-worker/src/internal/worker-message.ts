import type { CallReply, CodeCacheStatus, DriverEvent, ExecutionRequest } from "@suaveplan/sandbox-guest";
import type { WorkerCodeCaches } from "./worker-entry-source.js";

/**
 * What the worker entry posts to the host: `ready` once it has booted (the
 * host then sends one `run`), then the shared driver's events — `log` lines
 * and `call`s (guest→host calls, answered by a `reply`) while the guest runs,
 * and one `done` with the outcome and usage. A worker of the reuse tier is
 * ready again with its `done` (it prepares the next context before it reads
 * the next message) and posts no second `ready`. The first warmed worker's
 * `ready` carries the code caches of the entry and the kernel, made before
 * any guest code ran. Internal: never exported
 * from the package.
 */
export type WorkerMessage =
  | {
      type: "ready";
      cacheStatus: { entry: CodeCacheStatus; kernel: CodeCacheStatus };
      caches?: WorkerCodeCaches;
    }
  | DriverEvent;

/**
 * What the host posts to the worker entry: a `run` request, then a `reply`
 * for each `call` it answered. Each carries the run's number, so a reply
 * meant for an earlier run on a reused worker never reaches a later one (call
 * ids are unique within one run only); a reply that arrives after its run
 * ended is dropped by the driver. Internal: never exported from the package.
 */
export type HostMessage =
  | {
      type: "run";
      /** The run's number on this worker, from 1. */
      run: number;
      request: ExecutionRequest;
      /** The run's memory budget (heap and off-heap), in bytes: the entry samples the isolate against it. */
      memoryLimit: number;
      /** Prepare for another run after this one's `done` (the reuse tier); else the host terminates the worker. */
      reuse: boolean;
    }
  | { type: "reply"; run: number; reply: CallReply };
