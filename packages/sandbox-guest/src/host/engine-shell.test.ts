import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import type { EngineCapabilities, SandboxResult } from "@suaveplan/sandbox-core/types";
import { describe, expect, it } from "vitest";
import { toSandboxResult } from "../outcome/to-sandbox-result.js";
import type { GuestOutcome } from "../protocol/protocol.js";
import { type EngineRun, EngineShell, type ReadyRequest } from "./engine-shell.js";

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
