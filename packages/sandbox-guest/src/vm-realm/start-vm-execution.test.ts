import * as v8 from "node:v8";
import { runInContext, runInNewContext } from "node:vm";
import { prepareGuestCode } from "@suaveplan/sandbox-core/code-transformer";
import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import { createHostCodec } from "@suaveplan/sandbox-kernel";
import { describe, expect, it, vi } from "vitest";
import { toSandboxResult } from "../outcome/to-sandbox-result.js";
import { ModuleRegistry } from "../prepare/module-registry.js";
import { buildExecutionRequest } from "../prepare/prepare-execution.js";
import type { GuestCall } from "../protocol/protocol.js";
import type { ExecutionRequest } from "../request/execution-request.js";
import { startVmExecution } from "./start-vm-execution.js";
import { prepareVmRealm } from "./vm-realm.js";

// The real function, counted: which runs pay for V8's whole heap statistics (see memoryUsed below).
vi.mock("node:v8", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:v8")>();
  return { ...actual, getHeapStatistics: vi.fn(actual.getHeapStatistics) };
});

const codec = createHostCodec();
const MiB = 1024 * 1024;

function request(code: string, overrides: Partial<ExecutionRequest> = {}): ExecutionRequest {
  const prepared = prepareGuestCode(code);
  return {
    code: prepared.source,
    shift: prepared.shift,
    contextText: "",
    modulesText: "",
    sourceModules: [],
    timeoutMs: 2_000,
    maxOutputSize: 1024 * 1024,
    maxLogLines: 10_000,
    maxTimers: 100,
    maxTimerCreations: 1_000,
    maxResultBytes: 64 * 1024 * 1024,
    maxCallBytes: 1024 * 1024,
    ...overrides,
  };
}

async function run(code: string, overrides: Partial<ExecutionRequest> = {}) {
  const ended = await startVmExecution(request(code, overrides)).result;
  const { duration: _d, memoryUsed: _m, usage: _u, ...rest } = toSandboxResult(ended.outcome, ended);
  return rest;
}

describe("the shared driver on a node:vm realm", () => {
  it("leaves none of the kernel's globals on the context once the run is over", async () => {
    const prepared = prepareVmRealm({ maxTimers: 100, maxTimerCreations: 1_000 });
    const driver = startVmExecution(
      request("console.log(typeof tools); [typeof console, typeof setTimeout, typeof data]", {
        contextText: codec.encode({ data: 1 }, "context", 1024),
        tools: ["echo"],
      }),
      { prepared },
    );
    const ended = await driver.result;
    expect(toSandboxResult(ended.outcome, ended)).toMatchObject({
      success: true,
      result: ["object", "function", "number"],
    });
    // What stays is the context's own built-ins and the frozen `tools` (non-configurable, so guest
    // code cannot replace it; its functions reach only the emptied kit): the run's other globals
    // (and through them the kernel) are gone.
    expect(
      runInContext(
        "[typeof console, typeof setTimeout, typeof tools, typeof data, typeof Error.prepareStackTrace]",
        prepared.context,
      ),
    ).toEqual(["undefined", "undefined", "object", "undefined", "function"]);
  });
  it("empties the context one macrotask after the result is handed over when asked to (teardownLater)", async () => {
    const prepared = prepareVmRealm({ maxTimers: 100, maxTimerCreations: 1_000 });
    const ended = await startVmExecution(
      request("[typeof console, typeof data]", { contextValues: [["data", 1]] }),
      {
        prepared,
        teardownLater: true,
      },
    ).result;
    const seen = () => runInContext("[typeof console, typeof setTimeout, typeof data]", prepared.context);
    const atResult = seen();
    await new Promise((resolve) => setImmediate(resolve));
    expect([toSandboxResult(ended.outcome, ended).result, atResult, seen()]).toEqual([
      ["object", "number"],
      ["object", "function", "number"],
      ["undefined", "undefined", "undefined"],
    ]);
  });
  it("keeps at most one context waiting for its deferred teardown (runs chained in microtasks reach no macrotask)", async () => {
    const realms = [0, 1, 2].map(() => prepareVmRealm({ maxTimers: 100, maxTimerCreations: 1_000 }));
    for (const prepared of realms) {
      await startVmExecution(request("2 + 3", { straightLine: true }), {
        prepared,
        settleAtOnce: true,
        teardownLater: true,
      }).result;
    }
    const seen = () => realms.map((realm) => runInContext("typeof setTimeout", realm.context));
    const chained = seen();
    await new Promise((resolve) => setImmediate(resolve));
    expect([chained, seen()]).toEqual([
      ["function", "undefined", "undefined"],
      ["undefined", "undefined", "undefined"],
    ]);
  });
  it("takes a straight-line run's outcome without waiting a macrotask when asked to; any other run waits one for unhandled rejections", async () => {
    const order = async (code: string, straightLine: boolean, settleAtOnce = true) => {
      const seen: string[] = [];
      setImmediate(() => seen.push("macrotask"));
      const ended = await startVmExecution(request(code, { straightLine }), { settleAtOnce }).result;
      seen.push(toSandboxResult(ended.outcome, ended).success ? "outcome" : "failure");
      await new Promise((resolve) => setImmediate(resolve));
      return seen;
    };
    expect(await order("2 + 3", true)).toEqual(["outcome", "macrotask"]);
    expect(await order("2 + 3", false)).toEqual(["macrotask", "outcome"]);
    expect(await order("2 + 3", true, false)).toEqual(["macrotask", "outcome"]);
    // What the wait is for: a rejection nothing handles fails the run.
    expect(await order("Promise.reject(new Error('late')); 1", false)).toEqual(["macrotask", "failure"]);
  });

  it("answers a guest→host call with a reply that settles a guest promise", async () => {
    const calls: GuestCall[] = [];
    const driver = startVmExecution(
      request(
        "const a = await tools.echo({ n: 1, when: new Date(3) }); let denied; try { await tools.fail(2); } catch (e) { denied = [e.name, e.message, e instanceof Error]; } [a, denied]",
        { tools: ["echo", "fail"] },
      ),
      {
        onCall(call) {
          calls.push(call);
          setTimeout(() => {
            if (call.name === "echo") driver.reply({ id: call.id, ok: true, text: call.text });
            else
              driver.reply({
                id: call.id,
                ok: false,
                text: JSON.stringify({ name: "ToolError", message: "no" }),
              });
          }, 5);
          return undefined;
        },
      },
    );
    const ended = await driver.result;
    const { duration: _d, memoryUsed: _m, usage: _u, ...result } = toSandboxResult(ended.outcome, ended);
    expect(result).toStrictEqual({
      success: true,
      result: [{ n: 1, when: new Date(3) }, ["ToolError", "no", true]],
      logs: [],
    });
    expect(calls.map((call) => [call.name, codec.decode(call.text)])).toStrictEqual([
      ["echo", { n: 1, when: new Date(3) }],
      ["fail", 2],
    ]);
  });

  it("memoryUsed counts the buffers a run holds even when a collection during the run frees older garbage", async () => {
    v8.setFlagsFromString("--expose-gc");
    const collect = runInNewContext("gc") as () => void;
    collect(); // what earlier tests left, array buffers included
    // Heap garbage from before the run, freed while it runs: it must not be subtracted from the buffers.
    let older: unknown[] | undefined = Array.from({ length: 300_000 }, (_, i) => ({ i, s: `item ${i}` }));
    const driver = startVmExecution(
      request(
        "const keep = new Uint8Array(8 * 1024 * 1024).fill(1); await tools.collect(null); keep.length",
        {
          tools: ["collect"],
        },
      ),
      {
        onCall(call) {
          setTimeout(() => {
            older = undefined;
            collect();
            driver.reply({ id: call.id, ok: true, text: call.text });
          }, 0);
          return undefined;
        },
      },
    );
    const ended = await driver.result;
    expect({
      older,
      result: toSandboxResult(ended.outcome, ended).result,
      atLeastTheBuffer: (ended.memoryUsed ?? 0) >= 8 * MiB,
    }).toEqual({ older: undefined, result: 8 * MiB, atLeastTheBuffer: true });
  });

  it("memoryUsed reads V8's external memory only for runs that could make an array buffer", async () => {
    const runs: [string, string, Partial<ExecutionRequest>][] = [
      ["straight-line, nothing copied in", "2 + 3", { straightLine: true }],
      [
        "straight-line, a context",
        "data.length",
        { straightLine: true, contextText: codec.encode({ data: new Uint8Array(4) }, "context", MiB) },
      ],
      [
        "straight-line, a data module",
        "2 + 3",
        { straightLine: true, modulesText: JSON.stringify([["m", codec.encode(1, "module", MiB)]]) },
      ],
      ["not straight-line", "new ArrayBuffer(8).byteLength", {}],
    ];
    const readings: [string, number, unknown][] = [];
    for (const [name, code, overrides] of runs) {
      vi.mocked(v8.getHeapStatistics).mockClear();
      const ended = await startVmExecution(request(code, overrides), { settleAtOnce: true }).result;
      readings.push([name, vi.mocked(v8.getHeapStatistics).mock.calls.length, ended.outcome.kind]);
    }
    expect(readings).toEqual([
      ["straight-line, nothing copied in", 0, "value"],
      ["straight-line, a context", 2, "value"],
      ["straight-line, a data module", 2, "value"],
      ["not straight-line", 2, "value"],
    ]);
  });

  it("refuses a call when the host offers none, and the guest can catch it", async () => {
    expect(
      await run("let m; try { await tools.x(1); } catch (e) { m = e.message; } m", { tools: ["x"] }),
    ).toStrictEqual({ success: true, result: "host calls are not available", logs: [] });
  });

  it("ends the run at the deadline with a call still pending", async () => {
    const driver = startVmExecution(request("await tools.never(1)", { tools: ["never"], timeoutMs: 100 }), {
      onCall: () => undefined,
    });
    const ended = await driver.result;
    expect(ended.outcome).toStrictEqual({ kind: "timeout", timeoutMs: 100 });
  });

  it("keeps a run alive while a timer is pending, then clears every timer at the end", async () => {
    expect(await run("setTimeout(() => console.log('fired'), 20); 'sync'")).toStrictEqual({
      success: true,
      result: "sync",
      logs: [{ level: "log", message: "fired" }],
    });
  });

  it("ends a promise loop at the deadline", async () => {
    expect(await run("(async () => { for (;;) await null; })()", { timeoutMs: 200 })).toStrictEqual({
      success: false,
      error:
        "Execution timed out after 200 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
      errorCode: "SANDBOX_TIMEOUT",
      logs: [],
    });
  });

  it("refuses timers past the pending limit with a guest RangeError", async () => {
    expect(
      await run(
        "let n = 0; let caught; try { for (;;) { setTimeout(() => {}, 1); n++; } } catch (e) { caught = [n, e.name, e.message]; } caught",
        { maxTimers: 3 },
      ),
    ).toStrictEqual({
      success: true,
      result: [3, "RangeError", "Too many pending timers in the sandbox (limit 3)"],
      logs: [],
    });
  });

  it("reads context and data modules through the codec", async () => {
    expect(
      await run("[when.getTime(), tags.has('a'), config.level]", {
        contextText: codec.encode({ when: new Date(7), tags: new Set(["a"]) }, "context", 1e6),
        modulesText: JSON.stringify([["config", codec.encode({ level: 3 }, "module", 1e6)]]),
      }),
    ).toStrictEqual({ success: true, result: [7, true, 3], logs: [] });
  });

  it("evaluates source modules before the code, under their own file name", async () => {
    expect(
      await run("[mathx.double(4), (() => { try { mathx.fail(); } catch (e) { return e.stack; } })()]", {
        sourceModules: [
          {
            name: "mathx",
            source: "module.exports = { double: (n) => n * 2, fail() { throw new Error('m'); } };",
          },
        ],
      }),
    ).toStrictEqual({
      success: true,
      result: [
        8,
        "Error: m\n    at fail (sandbox-module:mathx:1:57)\n    at sandbox.js:1:40\n    at sandbox.js:1:82",
      ],
      logs: [],
    });
  });
});

describe("a context of primitives handed over by reference (vm realms: contextByReference)", () => {
  const limits = parseEngineLimits();
  const built = (context: unknown, byReference: boolean, memoryLimit = limits.memoryLimit) => {
    const result = buildExecutionRequest(
      OBSERVE,
      context,
      undefined,
      { ...limits, memoryLimit, contextByReference: byReference },
      new ModuleRegistry(),
    );
    if (!result.ok) throw new Error(result.result.error);
    return result.request;
  };
  // What a guest can see of its globals: values exactly (-0, NaN, a lone surrogate), descriptors, key order.
  const OBSERVE = `const names = ["s", "n", "z", "nan", "t", "nil", "u", "console"];
    [names.map((k) => [k, Object.is(globalThis[k], -0) ? "-0" : String(globalThis[k]), typeof globalThis[k],
      JSON.stringify(Object.getOwnPropertyDescriptor(globalThis, k), (key, v) => key === "value" ? undefined : v)]),
     Object.keys(globalThis).filter((k) => names.includes(k)), delete globalThis.s, typeof s]`;
  const context = {
    s: "\ud800 lone",
    n: 1.5,
    z: -0,
    nan: Number.NaN,
    t: true,
    nil: null,
    u: undefined,
    console: "mine",
  };

  it("shows the guest the same globals as the codec path, and leaves none on the context after the run", async () => {
    const byReference = built(context, true);
    expect([byReference.contextText, byReference.contextValues?.length]).toEqual(["", 8]);
    const realms = [0, 1].map(() => prepareVmRealm({ maxTimers: 100, maxTimerCreations: 1_000 }));
    const viaReference = await startVmExecution(byReference, { prepared: realms[0] }).result;
    const viaCodec = await startVmExecution(built(context, false), { prepared: realms[1] }).result;
    const value = (ended: typeof viaCodec) => toSandboxResult(ended.outcome, ended).result;
    expect(value(viaReference)).toEqual(value(viaCodec));
    expect(value(viaReference)).toEqual([
      [
        ["s", "\ud800 lone", "string", '{"writable":true,"enumerable":false,"configurable":true}'],
        ["n", "1.5", "number", '{"writable":true,"enumerable":false,"configurable":true}'],
        ["z", "-0", "number", '{"writable":true,"enumerable":false,"configurable":true}'],
        ["nan", "NaN", "number", '{"writable":true,"enumerable":false,"configurable":true}'],
        ["t", "true", "boolean", '{"writable":true,"enumerable":false,"configurable":true}'],
        ["nil", "null", "object", '{"writable":true,"enumerable":false,"configurable":true}'],
        ["u", "undefined", "undefined", '{"writable":true,"enumerable":false,"configurable":true}'],
        ["console", "mine", "string", '{"writable":true,"enumerable":false,"configurable":true}'],
      ],
      [],
      true,
      "undefined",
    ]);
    // Afterwards both contexts hold the same (the run's globals are gone; console is V8's own again).
    const after = "[typeof n, typeof nan, typeof u, typeof console, String(console)]";
    expect(realms.map((realm) => runInContext(after, realm?.context))).toEqual([
      ["undefined", "undefined", "undefined", "object", "[object Object]"],
      ["undefined", "undefined", "undefined", "object", "[object Object]"],
    ]);
  });

  it.each([
    ["an object value", { a: { b: 1 } }],
    ["a BigInt", { a: 1n }],
    ["a getter", Object.defineProperty({}, "a", { get: () => 1, enumerable: true })],
    ["a symbol key", { a: 1, [Symbol("k")]: 2 }],
    ["a class instance", new (class Box {})()],
    ["a proxy", new Proxy({ a: 1 }, {})],
    ["no entries", {}],
  ])("leaves %s to the codec", (_what, value) => {
    expect(built(value, true).contextValues).toBeUndefined();
  });

  it("leaves a context the codec may refuse for size to the codec, which words the refusal", () => {
    const result = buildExecutionRequest(
      "1",
      { big: "x".repeat(MiB) },
      undefined,
      { ...limits, memoryLimit: 1024, contextByReference: true },
      new ModuleRegistry(),
    );
    expect(result.ok ? "built" : [result.result.errorCode, result.result.error]).toEqual([
      "SANDBOX_INVALID_OPTIONS",
      "context.big: larger than 1024 bytes cannot be copied into the sandbox; pass plain data (SANDBOX_INVALID_OPTIONS)",
    ]);
  });
});
