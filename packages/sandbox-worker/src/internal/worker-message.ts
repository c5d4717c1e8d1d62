import type {
  CallReply,
  CodeCacheStatus,
  DriverEvent,
  ExecutionRequest,
  GuestCall,
} from "@suaveplan/sandbox-guest/realm";
import type { WorkerCodeCaches } from "./worker-entry-source.js";

/**
 * What the worker entry posts to the host: `ready` once it has booted (the
 * host then sends one `run`), then the shared driver's events — `log` lines
 * and `call`s (guest→host calls, answered by a `reply`) while the guest runs,
 * and one `done` with the outcome and usage. A worker of the reuse tier is
 * ready again with its `done` (it prepares the next context before it reads
 * the next message) and posts no second `ready`. The first warmed worker's
 * `ready` carries the code caches of the entry and the kernel, made before
 * any guest code ran. A `call` crosses as one string ({@link callMessage}).
 * Internal: never exported from the package.
 */
export type WorkerMessage =
  | {
      type: "ready";
      cacheStatus: { entry: CodeCacheStatus; kernel: CodeCacheStatus };
      caches?: WorkerCodeCaches;
    }
  | DriverEvent
  | string;

/**
 * What the host posts to the worker entry: a `run` request, then a `reply`
 * for each `call` it answered. Each carries the run's number, so a reply
 * meant for an earlier run on a reused worker never reaches a later one (call
 * ids are unique within one run only); a reply that arrives after its run
 * ended is dropped by the driver. A reply crosses as one string
 * ({@link replyMessage}). Internal: never exported from the package.
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
  | string;

/*
 * Calls and replies are the messages a tool-using run sends most, one each per
 * call, so they cross as strings: a structured clone of a string is cheaper
 * than of an object (about 4 µs less a round trip, measured on Node 20). The
 * numbers come first, space-separated; the name is length-prefixed, so the
 * text after it needs no escaping.
 */

/** A guest→host call as the worker posts it: `"<id> <name length> <name><text>"`. */
export function callMessage(call: GuestCall): string {
  return `${call.id} ${call.name.length} ${call.name}${call.text}`;
}

/** Read a {@link callMessage}; undefined when `message` is not one. */
export function readCallMessage(message: string): GuestCall | undefined {
  const idEnd = message.indexOf(" ");
  const lengthEnd = message.indexOf(" ", idEnd + 1);
  if (idEnd < 1 || lengthEnd < 0) return undefined;
  const id = Number(message.slice(0, idEnd));
  const length = Number(message.slice(idEnd + 1, lengthEnd));
  const nameEnd = lengthEnd + 1 + length;
  if (!Number.isSafeInteger(id) || !Number.isSafeInteger(length) || length < 0 || nameEnd > message.length)
    return undefined;
  return { id, name: message.slice(lengthEnd + 1, nameEnd), text: message.slice(nameEnd) };
}

/** The host's reply to a call of run `run`, as it posts it: `"<run> <id> <1|0> <text>"`. */
export function replyMessage(run: number, reply: CallReply): string {
  return `${run} ${reply.id} ${reply.ok ? 1 : 0} ${reply.text}`;
}

/** Read a {@link replyMessage}; undefined when `message` is not one. */
export function readReplyMessage(message: string): { run: number; reply: CallReply } | undefined {
  const runEnd = message.indexOf(" ");
  const idEnd = message.indexOf(" ", runEnd + 1);
  if (runEnd < 1 || idEnd < 0 || message[idEnd + 2] !== " ") return undefined;
  const run = Number(message.slice(0, runEnd));
  const id = Number(message.slice(runEnd + 1, idEnd));
  const ok = message[idEnd + 1];
  if (!Number.isSafeInteger(run) || !Number.isSafeInteger(id) || (ok !== "1" && ok !== "0")) return undefined;
  return { run, reply: { id, ok: ok === "1", text: message.slice(idEnd + 3) } };
}
