import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { failure, type SandboxFailure, type TypecheckDiagnostic } from "@suaveplan/sandbox-core/types";

/** What {@link Typechecker.check} resolves: nothing to report, or the failure to return instead of running. */
export type TypecheckOutcome = { ok: true } | { ok: false; result: SandboxFailure };

/** One check's input. */
export interface TypecheckRequest {
  /** The guest's TypeScript, as written. */
  code: string;
  /** Declarations of what the guest may use besides the ECMAScript library and the guest globals (e.g. `sandbox.toolDeclarations()`). */
  declarations?: string;
  /** Longest a check may take, in ms; then the worker is ended and the check resolves `SANDBOX_TIMEOUT`. Default 10 000. */
  timeoutMs?: number;
}

/** The TypeScript compiler on a worker thread of its own. Create it with {@link createTypechecker}. */
export interface Typechecker extends AsyncDisposable {
  /**
   * Type-check one snippet against the ES2023 library, the guest globals
   * (`console`, timers) and `declarations`, as a module (top-level `await`
   * and `return` are allowed). Resolves `SANDBOX_TYPECHECK_FAILED` with
   * `diagnostics` (1-based line and column in `code`, message, TS code);
   * never rejects.
   */
  check(request: TypecheckRequest): Promise<TypecheckOutcome>;
  /**
   * Start the worker and load the compiler and the library now, in the
   * background (it does not keep the process alive), so the first check does
   * not pay for them. Optional; a no-op once started.
   */
  warm(): void;
  /** End the worker (pending checks resolve `SANDBOX_ENGINE_DISPOSED`). Idempotent. */
  destroy(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Diagnostics quoted in the failure's text (all of them are in `diagnostics`). */
const QUOTED = 5;

interface Pending {
  resolve(outcome: TypecheckOutcome): void;
  timer: NodeJS.Timeout;
  worker: Worker;
}

type Reply =
  | { ready: true }
  | { id: number; diagnostics: TypecheckDiagnostic[] }
  | { id: number; unavailable: string }
  | { id: number; failed: string };

/**
 * Start a typechecker. The worker starts on the first check and stays warm
 * (the parsed library is cached there) without keeping the process alive
 * while idle; `destroy()` ends it.
 *
 * @example
 * const checker = createTypechecker();
 * await checker.check({ code: "const n: number = 'x'" });
 * // { ok: false, result: { errorCode: "SANDBOX_TYPECHECK_FAILED", diagnostics: [{ line: 1, column: 7, code: 2322, … }], … } }
 * await checker.destroy();
 */
export function createTypechecker(): Typechecker {
  let worker: Worker | undefined;
  let destroyed = false;
  let nextId = 0;
  const pending = new Map<number, Pending>();

  const settle = (id: number, outcome: TypecheckOutcome) => {
    const entry = pending.get(id);
    if (entry === undefined) return;
    pending.delete(id);
    clearTimeout(entry.timer);
    entry.resolve(outcome);
    if (![...pending.values()].some((p) => p.worker === entry.worker)) entry.worker.unref();
  };
  const failAll = (code: Parameters<typeof failure>[0], text: string, on?: Worker) => {
    for (const [id, entry] of [...pending])
      if (on === undefined || entry.worker === on) settle(id, { ok: false, result: failure(code, text) });
  };
  const start = (): Worker => {
    // The caller's flags (--input-type, loaders, --conditions) are not the compiler's business.
    const started = new Worker(workerEntry(), { execArgv: [] });
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
    started.on("exit", () => {
      if (worker === started) worker = undefined;
      failAll(
        SANDBOX_CODES.ENGINE_FAILED,
        "the typecheck worker stopped; the next check starts a new one",
        started,
      );
    });
    return started;
  };

  const checker: Typechecker = {
    warm() {
      if (destroyed || worker !== undefined) return;
      worker = start();
      worker.unref();
      // An empty program: the reply (to an id no check waits for) is dropped.
      worker.postMessage({ id: -1, code: "", declarations: "" });
    },
    check(request) {
      if (destroyed)
        return Promise.resolve({
          ok: false,
          result: failure(SANDBOX_CODES.ENGINE_DISPOSED, "This typechecker was destroyed; create a new one"),
        });
      worker ??= start();
      const current = worker;
      const id = nextId++;
      const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      return new Promise<TypecheckOutcome>((resolve) => {
        const timer = setTimeout(() => {
          settle(id, {
            ok: false,
            result: failure(
              SANDBOX_CODES.TIMEOUT,
              `typecheck did not finish in ${timeoutMs} ms; shorten the code or turn typecheck off`,
            ),
          });
          // A compiler stuck on one program is ended; the next check starts a fresh worker.
          if (worker === current) worker = undefined;
          void current.terminate();
        }, timeoutMs);
        pending.set(id, { resolve, timer, worker: current });
        current.ref();
        current.postMessage({ id, code: request.code, declarations: request.declarations ?? "" });
      });
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      const current = worker;
      worker = undefined;
      failAll(SANDBOX_CODES.ENGINE_DISPOSED, "This typechecker was destroyed; create a new one");
      if (current !== undefined) await current.terminate();
    },
    [Symbol.asyncDispose]() {
      return checker.destroy();
    },
  };
  return checker;
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

/** The built worker entry: next to this module in `dist/`, or the package's `dist/` when running from `src/`. */
function workerEntry(): URL {
  const beside = new URL("./typecheck-worker.js", import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL("../dist/typecheck-worker.js", import.meta.url);
}
