import type { DriverEvent } from "@suaveplan/sandbox-guest";

/**
 * What the worker entry posts to the host: `ready` once it has booted (the
 * host then hands it one `ExecutionRequest`), then the shared driver's
 * events — `log` lines while the guest runs and one `done`. Internal: never
 * exported from the package.
 */
export type WorkerMessage = { type: "ready" } | DriverEvent;
