import { writeSync } from "node:fs";
import { type Context, createContext, runInContext, Script, type ScriptOptions } from "node:vm";
import type { LogLevel } from "@suaveplan/sandbox-core/types";
import { type GuestApi, guestBootstrap, type HostBridge } from "./guest-bootstrap.js";
import {
  LOG_LEVELS,
  maxLogLines,
  PROTOCOL_FD,
  type RunnerErrorKind,
  type RunnerFrame,
  type RunnerInput,
  type RunnerModule,
  type RunnerOutput,
  SELF_DEADLINE_GRACE_MS,
} from "./protocol.js";

/** Where the runner sends its frames. */
export interface FrameSink {
  /** Deliver one frame, synchronously (a line must be out before guest code continues). */
  write(frame: RunnerFrame): void;
}

/** A vm context booted ahead of its single request. */
export interface PreparedRunner {
  /** Evaluate `input` once; streams `start`/`log` frames to `sink` and resolves the result (not sent). */
  run(input: RunnerInput, sink: FrameSink): Promise<RunnerOutput>;
}

/** The default output budget when a request omits `maxOutputSize`, in bytes. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** Longest error text a result carries, in UTF-16 code units. */
export const MAX_ERROR_LENGTH = 4096;

const GUEST_FILENAME = "sandbox.js";
/** setTimeout's ceiling, in ms (longer delays fire at once). */
const MAX_TIMER_MS = 2_147_483_647;
/** How much earlier than `timeoutMs` the vm watchdog may fire by our clock, in ms. */
const CLOCK_SLACK_MS = 5;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const hasOwn = Object.hasOwn;

type OutputBody =
  | { success: true; result?: unknown }
  | { success: false; error: string; errorKind: RunnerErrorKind };

/**
 * Validate a request read from stdin. Throws a plain `Error` naming the bad
 * field; the runner reports it as an `input` failure.
 */
export function parseRunnerInput(text: string): RunnerInput {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error("request: stdin is not one JSON object");
  }
  if (!isRecord(raw)) throw new Error("request: stdin is not one JSON object");
  const { code, context = {}, modules = [], maxOutputSize = DEFAULT_MAX_OUTPUT_BYTES, timeoutMs } = raw;
  if (typeof code !== "string") throw new Error("request.code: must be a string");
  if (!isRecord(context)) throw new Error("request.context: must be an object");
  if (!Array.isArray(modules)) throw new Error("request.modules: must be an array");
  const parsedModules = modules.map((module: unknown, index): RunnerModule => {
    if (!isRecord(module) || typeof module.name !== "string" || !IDENTIFIER.test(module.name)) {
      throw new Error(`request.modules[${index}].name: must be a JavaScript identifier`);
    }
    if (module.source !== undefined && typeof module.source !== "string") {
      throw new Error(`request.modules[${index}].source: must be a string`);
    }
    const parsed: RunnerModule = { name: module.name };
    if (hasOwn(module, "exports") && module.exports !== undefined) parsed.exports = module.exports;
    if (typeof module.source === "string") parsed.source = module.source;
    return parsed;
  });
  if (typeof maxOutputSize !== "number" || !Number.isSafeInteger(maxOutputSize) || maxOutputSize < 1) {
    throw new Error("request.maxOutputSize: must be a positive integer (bytes)");
  }
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== "number" || !Number.isSafeInteger(timeoutMs) || timeoutMs < 1)
  ) {
    throw new Error("request.timeoutMs: must be a positive integer (ms)");
  }
  const input: RunnerInput = { code, context, modules: parsedModules, maxOutputSize };
  if (timeoutMs !== undefined) input.timeoutMs = timeoutMs;
  return input;
}

/**
 * Boot a fresh `vm` context with the guest console, timers and module loader
 * (strict mode, no code generation from strings) before the request arrives,
 * so a pre-started child answers without paying this on the caller's path.
 */
export function prepareRunner(): PreparedRunner {
  const context = createContext(Object.create(null), {
    name: "suaveplan-spawn-guest",
    codeGeneration: { strings: false, wasm: true },
  });
  let handler: HostBridge = () => undefined;
  // The bridge is the only host function the guest realm holds (inside the bootstrap closure).
  const bridge: HostBridge = (op, a, b) => {
    try {
      return handler(op, a, b);
    } catch {
      return undefined;
    }
  };
  const bootstrap = new Script(`"use strict";(${guestBootstrap.toString()})`, {
    filename: "suaveplan-guest-bootstrap.js",
  }).runInContext(context) as typeof guestBootstrap;
  const api: GuestApi = Reflect.apply(bootstrap, undefined, [bridge]);
  const { installGlobals, loadModule, fireTimer, settle, describe } = api;
  // `import()` must reject with a guest-realm error: the default rejection is a host-realm TypeError.
  const GuestTypeError = runInContext("TypeError", context) as TypeErrorConstructor;
  const importModuleDynamically = (): never => {
    throw new GuestTypeError("import() is not available in the sandbox");
  };
  const describeGuest = (value: unknown): string => {
    const text = Reflect.apply(describe, undefined, [value]) as unknown;
    return typeof text === "string" ? text : "exception (it could not be described)";
  };
  // Warm the paths every request takes (compiler, vm timeout, heap statistics) while idle.
  new Script("0").runInContext(context, { timeout: 1000 });
  process.memoryUsage();
  let used = false;

  return {
    run(input, sink) {
      if (used) return Promise.reject(new Error("runner: a prepared runner evaluates one request only"));
      used = true;
      return new Promise<RunnerOutput>((resolve) => {
        const heapBefore = process.memoryUsage().heapUsed;
        const timers = new Map<number, NodeJS.Timeout>();
        const keepAlive = setInterval(() => {}, 2 ** 30);
        const timedOut = (): OutputBody => ({
          success: false,
          error: `Execution timed out after ${input.timeoutMs} ms`,
          errorKind: "timeout",
        });
        const deadline =
          input.timeoutMs === undefined
            ? undefined
            : setTimeout(
                () => finish(timedOut()),
                Math.min(input.timeoutMs + SELF_DEADLINE_GRACE_MS, MAX_TIMER_MS),
              );
        const pushLog = createLogBudget(input.maxOutputSize, sink);
        let nextTimerId = 0;
        let settled: { kind: string; payload: unknown } | undefined;
        let check: NodeJS.Immediate | undefined;
        let finished = false;

        const finish = (body: OutputBody): void => {
          if (finished) return;
          finished = true;
          for (const timer of timers.values()) clearTimeout(timer);
          timers.clear();
          clearInterval(keepAlive);
          clearTimeout(deadline);
          if (check !== undefined) clearImmediate(check);
          handler = (op) => (op === "log" ? 0 : undefined);
          const memoryUsed = Math.max(0, process.memoryUsage().heapUsed - heapBefore);
          resolve(
            body.success
              ? { type: "result", ...body, memoryUsed }
              : { type: "result", ...body, error: clip(body.error), memoryUsed },
          );
        };
        const finishIfIdle = (): void => {
          check = undefined;
          if (settled !== undefined && timers.size === 0) finish(bodyOf(settled));
        };
        // Checked on the next turn, so timers created by microtasks are counted first.
        const scheduleCheck = (): void => {
          if (!finished && check === undefined) check = setImmediate(finishIfIdle);
        };
        const fire = (id: number, repeat: boolean): void => {
          if (!repeat) timers.delete(id);
          try {
            Reflect.apply(fireTimer, undefined, [id]);
          } catch (error) {
            finish(guestFailure(describeGuest(error)));
          }
          if (!repeat) scheduleCheck();
        };

        handler = (op, a, b) => {
          switch (op) {
            case "log":
              return pushLog(a, b) ? 1 : 0;
            case "setTimer": {
              const id = ++nextTimerId;
              const ms = typeof a === "number" ? a : 1;
              const repeat = b === 1;
              timers.set(id, repeat ? setInterval(fire, ms, id, true) : setTimeout(fire, ms, id, false));
              return id;
            }
            case "clearTimer": {
              const timer = typeof a === "number" ? timers.get(a) : undefined;
              if (timer !== undefined) {
                clearTimeout(timer);
                timers.delete(a as number);
                scheduleCheck();
              }
              return undefined;
            }
            case "fail":
              finish(guestFailure(typeof a === "string" ? a : "exception (it could not be described)"));
              return undefined;
            case "done":
              if (settled === undefined) {
                settled = { kind: String(a), payload: b };
                scheduleCheck();
              }
              return undefined;
            default:
              return undefined;
          }
        };

        sink.write({ type: "start" });
        try {
          for (const module of input.modules) {
            const factory = module.source === undefined ? undefined : compileModule(module, context);
            const exportsJson = module.exports === undefined ? undefined : JSON.stringify(module.exports);
            try {
              Reflect.apply(loadModule, undefined, [module.name, exportsJson, factory]);
            } catch (error) {
              throw new GuestFailure(`module ${module.name} failed: ${describeGuest(error)}`);
            }
          }
          Reflect.apply(installGlobals, undefined, [JSON.stringify(input.context)]);
          // Same line as the guest's first line, so reported line numbers stay right.
          const code = input.code.startsWith("#!") ? `//${input.code.slice(2)}` : input.code;
          const script = compile(`"use strict";void 0;${code}`, GUEST_FILENAME, importModuleDynamically);
          let value: unknown;
          const runStarted = performance.now();
          try {
            value =
              input.timeoutMs === undefined
                ? script.runInContext(context, { displayErrors: false })
                : // A backstop only: the host SIGKILLs at timeoutMs, so the grace lets the host's kill win.
                  script.runInContext(context, {
                    displayErrors: false,
                    timeout: Math.min(input.timeoutMs + SELF_DEADLINE_GRACE_MS, MAX_TIMER_MS),
                  });
          } catch (error) {
            // Whatever was thrown (the vm's timeout error is created in the guest realm, so it
            // cannot be told apart from a guest's imitation): code that ran that long timed out.
            // The vm's watchdog clock has millisecond steps, hence the slack.
            if (
              input.timeoutMs !== undefined &&
              performance.now() - runStarted >= input.timeoutMs - CLOCK_SLACK_MS
            ) {
              finish(timedOut());
              return;
            }
            throw new GuestFailure(describeGuest(error));
          }
          Reflect.apply(settle, undefined, [value]);
        } catch (error) {
          finish(guestFailure(error instanceof GuestFailure ? error.message : describeHost(error)));
        }
      });
    },
  };
}

/**
 * The child's entry point: boot the context, read one request from stdin,
 * stream frames to fd 3, write the result frame and exit. An empty stdin
 * (a spare child that was never used) exits quietly.
 */
export async function main(): Promise<void> {
  // Guest promise rejections nobody handled must not crash the child.
  process.on("unhandledRejection", () => {});
  await warmUp();
  const runner = prepareRunner();
  const text = await readRequest();
  if (text.trim() === "") process.exit(0);
  const sink = createFdSink(PROTOCOL_FD);
  let input: RunnerInput;
  try {
    input = parseRunnerInput(text);
  } catch (error) {
    sink.write({
      type: "result",
      success: false,
      error: describeHost(error),
      errorKind: "input",
      memoryUsed: 0,
    });
    process.exit(0);
  }
  const output = await runner.run(input, sink);
  sink.write(output);
  process.exit(0);
}

/**
 * Run one throwaway request through every path a real one takes (parse,
 * compile, console, timers, promise, encode, frame) in a context of its own,
 * so a pre-started child answers its request with warm code instead of
 * first-call costs. Nothing is written anywhere.
 */
export async function warmUp(): Promise<void> {
  const input = parseRunnerInput(
    JSON.stringify({
      code: "console.log('warm', 1); new Promise((done) => setTimeout(() => done([1, 'two', { three: null }]), 0))",
      context: { warm: true },
      modules: [{ name: "warmModule", exports: { v: 1 }, source: "module.exports.w = 2;" }],
      maxOutputSize: 1024,
      timeoutMs: 5_000,
    }),
  );
  const discard: FrameSink = { write: (frame) => void Buffer.from(`${JSON.stringify(frame)}\n`, "utf8") };
  await prepareRunner().run(input, discard);
}

/** A sink writing newline-delimited JSON frames synchronously to `fd`; exits quietly once the host is gone. */
export function createFdSink(fd: number): FrameSink {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  return {
    write(frame) {
      const bytes = Buffer.from(`${JSON.stringify(frame)}\n`, "utf8");
      let offset = 0;
      while (offset < bytes.byteLength) {
        try {
          offset += writeSync(fd, bytes, offset);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "EAGAIN") {
            Atomics.wait(pause, 0, 0, 1);
            continue;
          }
          if (code === "EBADF") {
            process.stderr.write(`runner: fd ${fd} is not open; this script is spawned by SpawnEngine\n`);
            process.exit(64);
          }
          process.exit(0); // EPIPE: the host stopped listening
        }
      }
    },
  };
}

class GuestFailure extends Error {}

function compile(source: string, filename: string, importModuleDynamically: () => never): Script {
  try {
    return new Script(source, {
      filename,
      importModuleDynamically: importModuleDynamically as unknown as ScriptOptions["importModuleDynamically"],
    });
  } catch (error) {
    throw new GuestFailure(describeSyntaxError(error, filename));
  }
}

function compileModule(module: RunnerModule, context: Context): unknown {
  const filename = `module-${module.name}.js`;
  let script: Script;
  try {
    script = new Script(`"use strict";(function (module, exports) {${module.source}\n})`, { filename });
  } catch (error) {
    throw new GuestFailure(`module ${module.name} failed: ${describeSyntaxError(error, filename)}`);
  }
  return script.runInContext(context, { displayErrors: false });
}

/** `SyntaxError: message (line N)` from a compile error (a runner-realm error). */
function describeSyntaxError(error: unknown, filename: string): string {
  const text = describeHost(error);
  const stack = error instanceof Error && typeof error.stack === "string" ? error.stack : "";
  const line = stack.startsWith(`${filename}:`) ? /^[^\n]*:(\d+)\n/.exec(stack)?.[1] : undefined;
  return line === undefined ? text : `${text} (line ${line})`;
}

function describeHost(error: unknown): string {
  if (error instanceof Error) return error.message === "" ? error.name : `${error.name}: ${error.message}`;
  return String(error);
}

function guestFailure(error: string): OutputBody {
  return { success: false, error, errorKind: "guest" };
}

function bodyOf(settled: { kind: string; payload: unknown }): OutputBody {
  const payload = typeof settled.payload === "string" ? settled.payload : "";
  switch (settled.kind) {
    case "ok":
      try {
        return { success: true, result: JSON.parse(payload) };
      } catch {
        return { success: false, error: "result is not transferable: invalid JSON", errorKind: "transfer" };
      }
    case "undefined":
      return { success: true };
    case "transfer":
      return { success: false, error: payload, errorKind: "transfer" };
    default:
      return guestFailure(payload);
  }
}

/**
 * The guest-side half of the output budget: lines are forwarded whole while
 * they fit `maxBytes`; the first line that does not fit is forwarded cut just
 * past the budget (the host's LogCollector cuts it exactly and adds the
 * sentinel) and nothing after it is forwarded. Past {@link maxLogLines} lines a
 * `truncated` frame ends forwarding too, so a flood of empty lines cannot grow
 * the host either. Returns false once forwarding has stopped.
 */
function createLogBudget(maxBytes: number, sink: FrameSink): (level: unknown, message: unknown) => boolean {
  const lineLimit = maxLogLines(maxBytes);
  let usedBytes = 0;
  let lines = 0;
  let open = true;
  return (level, message) => {
    if (!open) return false;
    const text = typeof message === "string" ? message : "";
    const logLevel: LogLevel = LOG_LEVELS.includes(level as LogLevel) ? (level as LogLevel) : "log";
    lines++;
    if (lines > lineLimit) {
      open = false;
      sink.write({ type: "truncated" });
      return false;
    }
    const size = Buffer.byteLength(text, "utf8");
    if (usedBytes + size <= maxBytes) {
      usedBytes += size;
      sink.write({ type: "log", level: logLevel, message: text });
      return true;
    }
    open = false;
    // One code unit past the remaining room is always more than `room` bytes.
    sink.write({ type: "log", level: logLevel, message: text.slice(0, maxBytes - usedBytes + 1) });
    return false;
  };
}

function clip(text: string): string {
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The request: everything up to the first newline (the engine ends its JSON
 * with one, so the runner need not wait for end-of-file), or up to EOF.
 */
function readRequest(): Promise<string> {
  return new Promise((resolve) => {
    const stdin = process.stdin;
    let text = "";
    const done = (): void => {
      stdin.off("data", onData);
      stdin.off("end", done);
      stdin.pause();
      const newline = text.indexOf("\n");
      resolve(newline === -1 ? text : text.slice(0, newline));
    };
    const onData = (chunk: string): void => {
      text += chunk;
      if (chunk.includes("\n")) done();
    };
    stdin.setEncoding("utf8");
    stdin.on("data", onData);
    stdin.on("end", done);
  });
}
