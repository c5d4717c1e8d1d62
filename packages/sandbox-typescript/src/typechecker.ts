import { type ChildProcess, fork } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { failure, type SandboxFailure, type TypecheckDiagnostic } from "@suaveplan/sandbox-core/types";

/** What {@link Typechecker.check} resolves: nothing to report, or the failure to return instead of running. */
export type TypecheckOutcome = { ok: true } | { ok: false; result: SandboxFailure };

/** One check's input. */
export interface TypecheckRequest {
  /** The guest's TypeScript, as written. */
  code: string;
  /** Declarations of what the guest may use besides the ECMAScript library and the guest globals (e.g. `sandbox.toolDeclarations()`). */
  declarations?: string;
  /** Longest a check may take, in ms; then the compiler's process is ended and the check resolves `SANDBOX_TIMEOUT`. Default {@link TYPECHECK_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/** Options of {@link createTypechecker}. */
export interface TypecheckerOptions {
  /**
   * The compiler process's V8 heap limit (`--max-old-space-size`), in bytes,
   * rounded down to whole MiB; default {@link TYPECHECK_MEMORY_LIMIT_BYTES}.
   * A check that needs more resolves `SANDBOX_MEMORY_EXCEEDED`.
   */
  memoryLimit?: number;
}

/** The TypeScript compiler in a process of its own. Create it with {@link createTypechecker}. */
export interface Typechecker extends AsyncDisposable {
  /**
   * Type-check one snippet against the ES2023 library, the guest globals
   * (`console`, timers) and `declarations`, as a module (top-level `await`
   * and `return` are allowed). Resolves `SANDBOX_TYPECHECK_FAILED` with
   * `diagnostics` (1-based line and column in `code`, message, TS code),
   * `SANDBOX_TIMEOUT` past `timeoutMs` and `SANDBOX_MEMORY_EXCEEDED` past the
   * memory limit (the compiler's process is ended either way; the next check
   * starts a fresh one); never rejects.
   */
  check(request: TypecheckRequest): Promise<TypecheckOutcome>;
  /**
   * Start the compiler's process and load the compiler and the library now,
   * in the background (it does not keep the process alive), so the first
   * check does not pay for them. Optional; a no-op once started.
   */
  warm(): void;
  /** End the compiler's process (pending checks resolve `SANDBOX_ENGINE_DISPOSED`). Idempotent. */
  destroy(): Promise<void>;
}

/** A check's time budget when the request names none, in ms. */
export const TYPECHECK_TIMEOUT_MS = 10_000;
/**
 * The compiler process's default heap limit, in bytes (512 MiB). A warm
 * compiler with the ES library parsed holds about 100 MiB; a type that
 * needs more (a template literal doubled twenty-odd times) is ended.
 */
export const TYPECHECK_MEMORY_LIMIT_BYTES = 512 * 1024 * 1024;
const MIB = 1024 * 1024;
/** Diagnostics quoted in the failure's text (all of them are in `diagnostics`). */
const QUOTED = 5;

interface Pending {
  resolve(outcome: TypecheckOutcome): void;
  timer: NodeJS.Timeout;
  child: ChildProcess;
}

type Reply =
  | { ready: true }
  | { id: number; diagnostics: TypecheckDiagnostic[] }
  | { id: number; unavailable: string }
  | { id: number; failed: string };

/**
 * Start a typechecker. The compiler runs in a node process of its own
 * (`--max-old-space-size` from `memoryLimit`, no environment, stdio
 * ignored), started on the first check and kept warm (the parsed library is
 * cached there) without keeping this process alive while idle; `destroy()`
 * ends it. A process and not a worker thread: a type that grows strings past
 * a worker's heap limit makes V8 abort the whole process the worker runs in
 * (nodejs/node#47224), while a child's abort is only the child's.
 *
 * @throws SandboxError `SANDBOX_INVALID_CONFIG` when `memoryLimit` is not an integer of at least 64 MiB.
 * @example
 * const checker = createTypechecker();
 * await checker.check({ code: "const n: number = 'x'" });
 * // { ok: false, result: { errorCode: "SANDBOX_TYPECHECK_FAILED", diagnostics: [{ line: 1, column: 7, code: 2322, … }], … } }
 * await checker.destroy();
 */
export function createTypechecker(options: TypecheckerOptions = {}): Typechecker {
  const memoryLimit = options.memoryLimit ?? TYPECHECK_MEMORY_LIMIT_BYTES;
  if (!Number.isSafeInteger(memoryLimit) || memoryLimit < 64 * MIB) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `createTypechecker: memoryLimit must be an integer number of bytes, at least 64 MiB (got ${String(memoryLimit)})`,
    );
  }
  const limitMib = Math.floor(memoryLimit / MIB);
  let child: ChildProcess | undefined;
  let destroyed = false;
  let nextId = 0;
  const pending = new Map<number, Pending>();

  const settle = (id: number, outcome: TypecheckOutcome) => {
    const entry = pending.get(id);
    if (entry === undefined) return;
    pending.delete(id);
    clearTimeout(entry.timer);
    entry.resolve(outcome);
    if (![...pending.values()].some((p) => p.child === entry.child)) setRef(entry.child, false);
  };
  const failAll = (code: Parameters<typeof failure>[0], text: string, on?: ChildProcess) => {
    for (const [id, entry] of [...pending])
      if (on === undefined || entry.child === on) settle(id, { ok: false, result: failure(code, text) });
  };
  /** End `ended` and start the next check on a fresh process. */
  const retire = (ended: ChildProcess) => {
    if (child === ended) child = undefined;
    ended.kill("SIGKILL");
  };
  const start = (): ChildProcess => {
    const started = fork(fileURLToPath(childEntry()), [], {
      // The caller's flags (--input-type, loaders, --conditions) and environment are not the compiler's business.
      execArgv: [`--max-old-space-size=${limitMib}`],
      env: {},
      stdio: ["ignore", "ignore", "ignore", "ipc"],
      serialization: "json",
    });
    started.on("message", (reply: Reply) => {
      if ("ready" in reply) return;
      if ("diagnostics" in reply) settle(reply.id, outcomeOf(reply.diagnostics));
      else if ("unavailable" in reply)
        settle(reply.id, { ok: false, result: failure(SANDBOX_CODES.ENGINE_UNAVAILABLE, reply.unavailable) });
      else
        settle(reply.id, {
          ok: false,
          result: failure(SANDBOX_CODES.ENGINE_FAILED, `the TypeScript compiler threw (${reply.failed})`),
        });
    });
    started.on("error", () => undefined);
    // Children die with their parent: the child leaves on its IPC channel's `disconnect`, but not
    // while a check keeps it busy, so this process's exit ends it too.
    const killOnExit = () => started.kill("SIGKILL");
    process.once("exit", killOnExit);
    started.on("exit", (code, signal) => {
      process.removeListener("exit", killOnExit);
      if (child === started) child = undefined;
      if (signal === "SIGABRT" || code === 134) {
        // V8 aborts a process whose heap reached its limit (`FATAL ERROR: Reached heap limit`):
        // SIGABRT, or exit code 134 where the abort is reported as one.
        failAll(
          SANDBOX_CODES.MEMORY_EXCEEDED,
          `typecheck ran out of its ${limitMib} MiB of memory and was ended, nothing ran; the code's types are too large to check (simplify them or turn typecheck off)`,
          started,
        );
      }
      failAll(
        SANDBOX_CODES.ENGINE_FAILED,
        "the typecheck process stopped; the next check starts a new one",
        started,
      );
    });
    return started;
  };

  const checker: Typechecker = {
    warm() {
      if (destroyed || child !== undefined) return;
      child = start();
      setRef(child, false);
      // An empty program: the reply (to an id no check waits for) is dropped.
      post(child, { id: -1, code: "", declarations: "" });
    },
    check(request) {
      if (destroyed)
        return Promise.resolve({
          ok: false,
          result: failure(SANDBOX_CODES.ENGINE_DISPOSED, "This typechecker was destroyed; create a new one"),
        });
      child ??= start();
      const current = child;
      const id = nextId++;
      const timeoutMs = request.timeoutMs ?? TYPECHECK_TIMEOUT_MS;
      return new Promise<TypecheckOutcome>((resolve) => {
        const timer = setTimeout(() => {
          settle(id, {
            ok: false,
            result: failure(
              SANDBOX_CODES.TIMEOUT,
              `typecheck did not finish in ${timeoutMs} ms; shorten the code or turn typecheck off`,
            ),
          });
          // A compiler stuck on one program is ended; the next check starts a fresh process.
          retire(current);
        }, timeoutMs);
        pending.set(id, { resolve, timer, child: current });
        setRef(current, true);
        post(current, { id, code: request.code, declarations: request.declarations ?? "" });
      });
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      const current = child;
      child = undefined;
      failAll(SANDBOX_CODES.ENGINE_DISPOSED, "This typechecker was destroyed; create a new one");
      if (current === undefined || current.exitCode !== null || current.signalCode !== null) return;
      const exited = new Promise((resolve) => current.once("exit", resolve));
      // Held until it has exited: an unref'd process's `exit` would not keep this one waiting for it.
      current.ref();
      current.kill("SIGKILL");
      await exited;
    },
    [Symbol.asyncDispose]() {
      return checker.destroy();
    },
  };
  return checker;
}

/** Whether `child` (and its IPC channel) keeps this process alive: only while a check waits on it. */
function setRef(child: ChildProcess, ref: boolean): void {
  if (ref) {
    child.ref();
    child.channel?.ref();
  } else {
    child.unref();
    child.channel?.unref();
  }
}

/** Send a request; a process that is already gone fails its checks through its `exit`. */
function post(child: ChildProcess, message: unknown): void {
  if (child.connected) child.send(message as object, () => undefined);
}

/** `SANDBOX_TYPECHECK_FAILED` with the diagnostics as data, or ok when there are none. */
export function outcomeOf(diagnostics: TypecheckDiagnostic[]): TypecheckOutcome {
  if (diagnostics.length === 0) return { ok: true };
  const quoted = diagnostics
    .slice(0, QUOTED)
    .map((d) => `line ${d.line}, column ${d.column}: ${d.message} (TS${d.code})`)
    .join("; ");
  const more = diagnostics.length > QUOTED ? `; and ${diagnostics.length - QUOTED} more` : "";
  const count = diagnostics.length === 1 ? "1 error" : `${diagnostics.length} errors`;
  return {
    ok: false,
    result: failure(
      SANDBOX_CODES.TYPECHECK_FAILED,
      `TypeScript found ${count}, nothing ran: ${quoted}${more}`,
      { diagnostics },
    ),
  };
}

/** The built child entry: next to this module in `dist/`, or the package's `dist/` when running from `src/`. */
function childEntry(): URL {
  const beside = new URL("./typecheck-child.js", import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL("../dist/typecheck-child.js", import.meta.url);
}
