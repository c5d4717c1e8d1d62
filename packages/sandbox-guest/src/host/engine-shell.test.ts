import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import type { EngineCapabilities, SandboxResult } from "@suaveplan/sandbox-core/types";
import { describe, expect, it } from "vitest";
import { toSandboxResult } from "../outcome/to-sandbox-result.js";
import type { GuestOutcome } from "../protocol/protocol.js";
import {
  type EngineRun,
  EngineShell,
  EngineShellBase,
  type PreparedRun,
  type ReadyRequest,
} from "./engine-shell.js";

/**
 * The smallest engine on the shell: a run answers the code's text when the
 * test says so, or what aborted it; `start` may wait (as the worker engine
 * waits for a pooled worker). Every step lands in `events`.
 */
class StepEngine extends EngineShell {
  readonly name = "step";
  readonly capabilities = {} as EngineCapabilities;
  readonly events: string[] = [];
  /** Resolves a pending `start`; set while one waits. */
  letStart: (() => void) | undefined;
  /** Ends the running run with its value; set while one runs. */
  finish: (() => void) | undefined;

  constructor(private readonly waitToStart = false) {
    super("StepEngine", parseEngineLimits());
  }

  protected async start({ request }: ReadyRequest): Promise<EngineRun> {
    if (this.waitToStart) await new Promise<void>((resolve) => (this.letStart = resolve));
    this.events.push(`start ${request.code}`);
    let end!: (outcome: GuestOutcome) => void;
    const result = new Promise<SandboxResult>((resolve) => {
      end = (outcome) => {
        this.events.push(`end ${outcome.kind}`);
        resolve(toSandboxResult(outcome, { duration: 0, logs: [] }));
      };
    });
    this.finish = () => end({ kind: "value", text: JSON.stringify(request.code) });
    return { abort: (outcome) => end(outcome), result };
  }

  protected async dispose(): Promise<void> {
    this.events.push("dispose");
  }
}

describe("EngineShell", () => {
  it("destroy() ends the live runs, waits for their results, then disposes once; later calls share the promise", async () => {
    const engine = new StepEngine();
    const running = engine.execute('"a"');
    await new Promise((resolve) => setImmediate(resolve));
    const first = engine.destroy();
    expect(engine.destroy()).toBe(first);
    await first;
    await engine[Symbol.asyncDispose]();
    expect(await running).toMatchObject({
      success: false,
      errorCode: "SANDBOX_ENGINE_DISPOSED",
      error: "StepEngine was destroyed while the code ran (SANDBOX_ENGINE_DISPOSED)",
    });
    expect(engine.events).toEqual(['start "a"', "end disposed", "dispose"]);
  });

  it("a run the engine started while destroy() ran is ended at once, not left running", async () => {
    const engine = new StepEngine(true);
    const running = engine.execute('"late"');
    await new Promise((resolve) => setImmediate(resolve));
    const destroyed = engine.destroy();
    await destroyed; // nothing was live yet: disposed at once
    engine.letStart?.();
    expect((await running).errorCode).toBe("SANDBOX_ENGINE_DISPOSED");
    expect(engine.events).toEqual(["dispose", 'start "late"', "end disposed"]);
  });

  it("a signal aborted while the engine was starting the run cancels it (the abort event is not repeated)", async () => {
    const engine = new StepEngine(true);
    const controller = new AbortController();
    const running = engine.execute('"slow"', {}, { signal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    engine.letStart?.();
    expect((await running).errorCode).toBe("SANDBOX_CANCELLED");
    expect(engine.events).toEqual(['start "slow"', "end cancelled"]);
    await engine.destroy();
  });

  it("an aborted signal starts nothing; a run that ends is answered; use after destroy is refused with the engine's name", async () => {
    const engine = new StepEngine();
    const controller = new AbortController();
    controller.abort();
    const cancelled = await engine.execute("1", {}, { signal: controller.signal });
    const running = engine.execute('"b"');
    await new Promise((resolve) => setImmediate(resolve));
    engine.finish?.();
    const answered = await running;
    await engine.destroy();
    expect({
      cancelled: cancelled.error,
      answered: answered.result,
      after: (await engine.execute("1")).error,
      events: engine.events,
    }).toEqual({
      cancelled: "Execution was cancelled before it started (SANDBOX_CANCELLED)",
      answered: '"b"', // the code's text, as the step engine answers it
      after: "StepEngine was destroyed; create a new StepEngine to run code (SANDBOX_ENGINE_DISPOSED)",
      events: ['start "b"', "end value", "dispose"],
    });
    expect(() => engine.registerModule({ name: "m", exports: {} })).toThrow(
      "StepEngine.registerModule: the engine was destroyed; create a new StepEngine (SANDBOX_ENGINE_DISPOSED)",
    );
  });
});

/**
 * An engine on the generic base that builds no request (as the queue's
 * caller side hands the run to another machine): `prepare` keeps the code
 * as written, and the guards say what the engine chose.
 */
class RelayEngine extends EngineShellBase<PreparedRun & { code: string }> {
  readonly name = "relay";
  readonly capabilities = {} as EngineCapabilities;
  readonly sent: string[] = [];

  constructor() {
    super(
      { execute: "relay gone", registerModule: "relay gone (register)", running: "relay gone mid-run" },
      parseEngineLimits(),
    );
  }

  protected prepare(code: string, _context: unknown, options: { signal?: AbortSignal } | undefined) {
    if (code === "refuse")
      return {
        ok: false as const,
        result: toSandboxResult({ kind: "fault", message: "refused" }, { duration: 0, logs: [] }),
      };
    return { ok: true as const, signal: options?.signal, code };
  }

  protected start({ code }: { code: string }): EngineRun {
    this.sent.push(code);
    let end!: (outcome: GuestOutcome) => void;
    const result = new Promise<SandboxResult>((resolve) => {
      end = (outcome) => resolve(toSandboxResult(outcome, { duration: 0, logs: [] }));
    });
    return { abort: end, result };
  }

  protected dispose(): void {}
}

describe("EngineShellBase", () => {
  it("hands start what prepare made (no request built), and words every destroyed guard as the engine chose", async () => {
    const engine = new RelayEngine();
    const refused = await engine.execute("refuse");
    const controller = new AbortController();
    const cancelled = engine.execute("const n: number = 1", {}, { signal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const running = engine.execute("later");
    await new Promise((resolve) => setImmediate(resolve));
    await engine[Symbol.asyncDispose]();
    expect({
      refused: refused.error,
      cancelled: (await cancelled).error,
      disposed: (await running).error,
      after: (await engine.execute("1")).error,
      sent: engine.sent,
    }).toEqual({
      refused: "refused (SANDBOX_ENGINE_FAILED)",
      cancelled: "Execution was cancelled (SANDBOX_CANCELLED)",
      disposed: "relay gone mid-run (SANDBOX_ENGINE_DISPOSED)",
      after: "relay gone (SANDBOX_ENGINE_DISPOSED)",
      sent: ["const n: number = 1", "later"], // TypeScript as written: nothing erased it
    });
    expect(() => engine.registerModule({ name: "m", exports: {} })).toThrow(
      "relay gone (register) (SANDBOX_ENGINE_DISPOSED)",
    );
  });
});
