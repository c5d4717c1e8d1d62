import type { GuestOutcome } from "@suaveplan/sandbox-guest";
import type { ChildOutcome } from "./race-child.js";

/** What the engine knows about the execution besides how its child ended. */
export interface ExecutionFacts {
  /** The execution's `timeout`, in ms. */
  timeoutMs: number;
  /** The execution's `memoryLimit`, in bytes. */
  memoryLimit: number;
  /** The engine's `startTimeout`, in ms. */
  startTimeoutMs: number;
  /** The Node binary the child runs. */
  execPath: string;
  /** True once the engine was destroyed. */
  destroyed: boolean;
}

/** V8's last words on stderr when the heap limit (`--max-old-space-size`) is reached. */
const OUT_OF_MEMORY = /heap out of memory|javascript OOM|Reached heap limit/i;

/**
 * The one mapping from how a child ended to a `GuestOutcome`: the runner's
 * own `done` frame as it is; a child killed for `options.signal` is
 * `cancelled`, a SIGKILL at the deadline a `timeout`, a
 * child that died of heap exhaustion or was killed for its sampled memory `memory`, one killed by `destroy()`
 * `disposed`, and any other death or broken protocol a `fault` (reported
 * with `SANDBOX_SPAWN_FAILED`), quoting the start of the child's stderr.
 */
export function toGuestOutcome(ended: ChildOutcome, facts: ExecutionFacts): GuestOutcome {
  if (ended.kind === "ok") return ended.outcome;
  if (ended.kind === "cancelled") return { kind: "cancelled" };
  if (ended.kind === "memory") return { kind: "memory", limitBytes: facts.memoryLimit };
  if (facts.destroyed) return { kind: "disposed", message: "SpawnEngine was destroyed while the code ran" };
  if (ended.kind === "timeout") {
    return ended.phase === "run"
      ? { kind: "timeout", timeoutMs: facts.timeoutMs }
      : fault(
          `The child process did not start the code within ${facts.startTimeoutMs} ms (startTimeout); the machine may be overloaded`,
          ended.stderr,
        );
  }
  if (OUT_OF_MEMORY.test(ended.stderr)) return { kind: "memory", limitBytes: facts.memoryLimit };
  if (ended.kind === "parse-error" && ended.error !== undefined) {
    return fault(
      `Could not run the child process ${facts.execPath}: ${ended.error.message}. Check execPath and runnerPath`,
      "",
    );
  }
  const how =
    ended.signal !== null
      ? `was killed by ${ended.signal}`
      : `exited with code ${ended.exitCode === null ? "unknown" : ended.exitCode}`;
  if (ended.kind === "no-output")
    return fault(`The child process ${how} before sending a result`, ended.stderr);
  // A child that broke the protocol while still running is killed by raceChild right after.
  const after = ended.exitCode === null && ended.signal === null ? "it was killed" : `it ${how}`;
  return fault(`The child process broke the protocol (${ended.reason}); ${after}`, ended.stderr);
}

function fault(message: string, stderr: string): GuestOutcome {
  const text = stderr.trim();
  if (text === "") return { kind: "fault", message };
  const excerpt = text.length > 300 ? `${text.slice(0, 300)}…` : text;
  return { kind: "fault", message: `${message}. Child stderr: ${excerpt.replace(/\s+/g, " ")}` };
}
