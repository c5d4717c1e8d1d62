import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import type { SandboxResult } from "@suaveplan/sandbox-core/types";
import { afterEach, describe, expect, it } from "vitest";
import { VmEngine } from "../src/index.js";

// Adversarial: each test is named after the technique and counts its assertions.
// The probes report what they reached as plain data; a host `process` never
// crosses back, so "HOST" in a result is the tell-tale of an escape.

const engines: VmEngine[] = [];
function engine(): VmEngine {
  const created = new VmEngine({ timeout: 2000 });
  engines.push(created);
  return created;
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.destroy()));
});

function outcome(result: SandboxResult): {
  success: boolean;
  result: unknown;
  errorCode: string | undefined;
} {
  return { success: result.success, result: result.result, errorCode: result.errorCode };
}

/** Guest helper: what a caught value is (guest error, HOST error or something else). */
const CLASSIFY = `const classify = (e) => e instanceof Error ? "guest " + e.name : (e !== null && typeof e === "object" ? "HOST " + String(e && e.name) : "value " + String(e));`;

describe("escapes from the vm engine", () => {
  it("this.constructor.constructor('return process')() reaches only the guest Function (and code generation is off)", async () => {
    expect.assertions(2);
    const vm = engine();
    const viaGlobal = await vm.execute(
      `${CLASSIFY} let r; try { r = typeof this.constructor.constructor("return process")(); } catch (e) { r = classify(e); } r`,
    );
    expect(outcome(viaGlobal)).toEqual({ success: true, result: "guest EvalError", errorCode: undefined });
    const viaAsync = await vm.execute(
      `${CLASSIFY} let r; try { r = typeof (async () => {}).constructor("return process")(); } catch (e) { r = classify(e); } r`,
    );
    expect(outcome(viaAsync)).toEqual({ success: true, result: "guest EvalError", errorCode: undefined });
  });

  it("context values are guest-realm copies: their constructor chain stays in the guest", async () => {
    expect.assertions(2);
    const hostObject = { nested: { list: [1] } };
    const result = await engine().execute(
      `${CLASSIFY} let r; try { r = typeof hostObject.nested.list.constructor.constructor("return process")(); } catch (e) { r = classify(e); } [r, hostObject instanceof Object, Object.getPrototypeOf(hostObject.nested.list) === Array.prototype]`,
      { hostObject },
    );
    expect(outcome(result)).toEqual({
      success: true,
      result: ["guest EvalError", true, true],
      errorCode: undefined,
    });
    expect(hostObject).toEqual({ nested: { list: [1] } });
  });

  it("errors thrown by host callbacks never reach the guest (throwing onLog)", async () => {
    expect.assertions(2);
    let calls = 0;
    const result = await engine().execute(
      `${CLASSIFY} let r = "no error reached the guest"; try { console.log("x"); console.error("y"); } catch (e) { r = classify(e); try { r += " " + typeof e.constructor.constructor("return process")(); } catch {} } r`,
      {},
      {
        onLog: () => {
          calls++;
          throw new Error("host callback failed");
        },
      },
    );
    expect(outcome(result)).toEqual({
      success: true,
      result: "no error reached the guest",
      errorCode: undefined,
    });
    expect(calls).toBe(2);
  });

  it("stack overflow at the host-callback boundary yields no host-realm RangeError", async () => {
    expect.assertions(1);
    const result = await engine().execute(
      `let foreign = 0; let dived = 0;
       function dive(n) {
         try { dive(n + 1); } catch (e) {
           if (!(e instanceof Error)) foreign++;
           try { console.log("deep"); setTimeout(() => {}, 0); clearTimeout(0); } catch (err) { if (!(err instanceof Error)) foreign++; }
           dived = Math.max(dived, n);
         }
       }
       dive(0); ({ foreign, reachedDepth: dived > 100 })`,
    );
    expect(outcome(result)).toEqual({
      success: true,
      result: { foreign: 0, reachedDepth: true },
      errorCode: undefined,
    });
  });

  it("timer callbacks see only guest values: this, arguments.callee.caller, constructor chain", async () => {
    expect.assertions(1);
    const result = await engine().execute(
      `${CLASSIFY} new Promise((resolve) => setTimeout(function () {
         const seen = [this === globalThis ? "this: guest global" : "this: " + typeof this, "args: " + arguments.length];
         try { const caller = arguments.callee.caller; seen.push(caller === null ? "caller: null" : "caller: " + typeof caller); } catch (e) { seen.push("caller: " + classify(e)); }
         try { seen.push(typeof this.constructor.constructor("return process")()); } catch (e) { seen.push(classify(e)); }
         resolve(seen);
       }, 1))`,
    );
    expect(outcome(result)).toEqual({
      success: true,
      result: ["this: guest global", "args: 0", "caller: null", "guest EvalError"],
      errorCode: undefined,
    });
  });

  it("Error.prepareStackTrace cannot be replaced (CallSites would expose host frames) and stacks show no host paths", async () => {
    expect.assertions(3);
    const vm = engine();
    const result = await vm.execute(
      `"use strict";
       const report = [];
       try { Error.prepareStackTrace = (error, frames) => frames; report.push("replaced"); } catch (e) { report.push("replace refused: " + e.name); }
       try { globalThis.Error = { prepareStackTrace: (error, frames) => frames }; report.push("Error swapped"); } catch (e) { report.push("swap refused: " + e.name); }
       report.push(typeof new Error("probe").stack);
       report`,
    );
    expect(outcome(result)).toEqual({
      success: true,
      result: ["replace refused: TypeError", "swap refused: TypeError", "string"],
      errorCode: undefined,
    });
    // An error created under host frames (getter called while the result is copied out).
    const nested = await vm.execute(
      `({ get stack() { return (function inner() { return new Error("deep").stack; })(); } })`,
    );
    const stack = (nested.result as { stack: string }).stack;
    expect(stack.split("\n")[0]).toBe("Error: deep");
    expect(
      stack
        .split("\n")
        .slice(1)
        .every((line) => /^ {4}at .*sandbox\.js:\d+:\d+\)?$/.test(line)),
    ).toBe(true);
  });

  it("dynamic import() is refused before it can reject with a host-realm error", async () => {
    expect.assertions(3);
    const vm = engine();
    const result = await vm.execute(
      `import("node:fs").catch((e) => e.constructor.constructor("return process")())`,
    );
    expect({ success: result.success, errorCode: result.errorCode }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.CODE_BLOCKED,
    });
    expect(result.error).toBe(
      "import() and import declarations are not available in the sandbox (line 1) (SANDBOX_CODE_BLOCKED)",
    );
    // The word alone (in a string) is not a false positive.
    expect(outcome(await vm.execute(`"import('fs')"`))).toEqual({
      success: true,
      result: "import('fs')",
      errorCode: undefined,
    });
  });

  it("getters, proxies and thenables in results and thrown values run under the timeout, not in the host", async () => {
    const cases: [string, string][] = [
      ["({ get x() { for (;;) {} } })", SANDBOX_CODES.TIMEOUT],
      ["new Proxy({}, { ownKeys() { for (;;) {} } })", SANDBOX_CODES.TIMEOUT],
      ["({ get then() { for (;;) {} } })", SANDBOX_CODES.TIMEOUT],
      // Describing a thrown value never runs its getters: the console form shows `[Getter]`.
      ["throw { get message() { for (;;) {} } }", SANDBOX_CODES.GUEST_ERROR],
      ["throw new Proxy({}, { getPrototypeOf() { for (;;) {} } })", SANDBOX_CODES.TIMEOUT],
    ];
    expect.assertions(cases.length);
    const vm = engine();
    for (const [code, errorCode] of cases) {
      const result = await vm.execute(code, {}, { timeout: 200 });
      expect({ code, errorCode: result.errorCode }).toEqual({ code, errorCode });
    }
  });

  it("a thrown Error with a looping message/name getter: node's error decoration never runs it outside the timeout (host hang)", async () => {
    const cases = [
      "const e = new Error('x'); Object.defineProperty(e, 'message', { get() { for (;;) {} } }); throw e",
      "const e = new TypeError('x'); Object.defineProperty(e, 'name', { get() { for (;;) {} } }); throw e",
    ];
    expect.assertions(cases.length);
    const vm = engine();
    for (const code of cases) {
      const result = await vm.execute(code, {}, { timeout: 200 });
      expect({ code, errorCode: result.errorCode }).toEqual({ code, errorCode: SANDBOX_CODES.TIMEOUT });
    }
  });

  it("a timer callback (or the error it throws) running into the deadline reports SANDBOX_TIMEOUT, not success", async () => {
    const cases = [
      "setTimeout(() => { for (;;) {} }, 1)",
      "setTimeout(() => { const e = new Error('x'); Object.defineProperty(e, 'name', { get() { for (;;) {} } }); throw e }, 1)",
    ];
    expect.assertions(cases.length);
    const vm = engine();
    for (const code of cases) {
      const result = await vm.execute(code, {}, { timeout: 200 });
      expect({ code, success: result.success, errorCode: result.errorCode }).toEqual({
        code,
        success: false,
        errorCode: SANDBOX_CODES.TIMEOUT,
      });
    }
  });

  it("FinalizationRegistry is removed (its callbacks would run after the execution, outside the timeout)", async () => {
    expect.assertions(1);
    expect(outcome(await engine().execute("typeof FinalizationRegistry"))).toEqual({
      success: true,
      result: "undefined",
      errorCode: undefined,
    });
  });

  it("the runtime binding is not discoverable by reflection on the global object", async () => {
    expect.assertions(1);
    expect(
      outcome(
        await engine().execute(
          "Object.getOwnPropertyNames(globalThis).concat(Object.getOwnPropertySymbols(globalThis).map(String)).filter((n) => /suaveplan|host/i.test(n))",
        ),
      ),
    ).toEqual({ success: true, result: [], errorCode: undefined });
  });

  it("Atomics.wait and WebAssembly cannot get around the limits", async () => {
    expect.assertions(2);
    const vm = engine();
    const wait = await vm.execute(
      "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)",
      {},
      { timeout: 200 },
    );
    expect(wait.errorCode).toBe(SANDBOX_CODES.TIMEOUT);
    const wasm = await vm.execute(
      "try { new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])); 'compiled' } catch (e) { e.name }",
    );
    expect(outcome(wasm)).toEqual({ success: true, result: "CompileError", errorCode: undefined });
  });

  // ── What node:vm cannot stop (documented in the README; these tests pin the behaviour) ──

  it("DOCUMENTED: synchronous guest code blocks the host event loop until the timeout", async () => {
    expect.assertions(2);
    let hostTimerFiredDuringGuest = false;
    let guestRunning = true;
    const timer = setTimeout(() => {
      hostTimerFiredDuringGuest = guestRunning;
    }, 10);
    const result = await engine().execute(
      "const end = Date.now() + 150; while (Date.now() < end) {} console.log('end'); 'done'",
      {},
      {
        onLog: () => {
          guestRunning = false;
        },
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    clearTimeout(timer);
    expect(result.result).toBe("done");
    expect(hostTimerFiredDuringGuest).toBe(false);
  });

  it("DOCUMENTED: guest allocations share the host heap (memoryLimit is not enforced)", async () => {
    expect.assertions(2);
    const vm = new VmEngine({ memoryLimit: 1_000_000 });
    engines.push(vm);
    expect(vm.capabilities.enforcesMemoryLimit).toBe(false);
    // 8 MB against a 1 MB "limit": it runs; only the host's own heap limit would stop it.
    const result = await vm.execute("new Array(1e6).fill(1).length");
    expect(outcome(result)).toEqual({ success: true, result: 1e6, errorCode: undefined });
  });
});
