import { afterEach, describe, expect, it } from "vitest";
import { QuickJsEngine } from "../src/index.js";

const MIB = 1024 * 1024;
const engines: QuickJsEngine[] = [];
const engine = (options: ConstructorParameters<typeof QuickJsEngine>[0] = {}): QuickJsEngine => {
  const made = new QuickJsEngine(options);
  engines.push(made);
  return made;
};

afterEach(async () => {
  await Promise.all(engines.splice(0).map((made) => made.destroy()));
});

// What the conformance suite cannot see: a slot runs one execution after another from the image of
// its installed kernel, so what must differ per run (randomness, the clock) is renewed, and nothing
// a run did may reach the next.
describe("QuickJsEngine: every run starts from the installed kernel's image", () => {
  it("what a run changed is gone; Math.random, crypto and performance.now are the run's own", async () => {
    const quickjs = engine({ maxIdleSlots: 1 });
    const probe =
      "const seen = [typeof leaked, typeof Array.prototype.extra, Math.random(), crypto.randomUUID(), performance.now() < 1000];" +
      " globalThis.leaked = 1; Array.prototype.extra = 1; seen";
    const first = await quickjs.execute(probe);
    const second = await quickjs.execute(probe);
    expect(first.success && second.success).toBe(true);
    const [a, b] = [first.result, second.result] as [unknown[], unknown[]];
    expect([a[0], a[1], a[4], b[0], b[1], b[4]]).toEqual([
      "undefined",
      "undefined",
      true,
      "undefined",
      "undefined",
      true,
    ]);
    // One slot ran both (maxIdleSlots 1, one at a time): the image would repeat these were they not renewed.
    expect(b[2]).not.toBe(a[2]);
    expect(b[3]).not.toBe(a[3]);
  });
});

describe("QuickJsEngine: slots copied from the first one's image", () => {
  it("8 concurrent runs (8 slots, 7 of them copies) each start clean, with their own randomness, twice over", async () => {
    const quickjs = engine({ maxIdleSlots: 8 });
    const round = () =>
      Promise.all(
        Array.from({ length: 8 }, () =>
          quickjs.execute(
            "const seen = [typeof leaked, Math.random(), crypto.randomUUID()]; globalThis.leaked = 1;" +
              " await new Promise((resolve) => setTimeout(resolve, 20)); seen",
          ),
        ),
      );
    for (const results of [await round(), await round()]) {
      const seen = results.map((result) => result.result as [string, number, string]);
      expect(seen.map((entry) => entry[0])).toEqual(Array(8).fill("undefined"));
      expect(new Set(seen.map((entry) => entry[1])).size).toBe(8);
      expect(new Set(seen.map((entry) => entry[2])).size).toBe(8);
    }
  });
});

describe("QuickJsEngine: one slot, many runs", () => {
  it("300 allocation-heavy runs in a row on one slot each compute the same value (the restored allocator stays sound)", async () => {
    const quickjs = engine({ maxIdleSlots: 1 });
    // Sizes vary by run, so each run leaves the heap (and the top chunk) somewhere else.
    const code = (n: number) =>
      `const m = new Map(); for (let i = 0; i < ${n}; i++) m.set("k" + i, { i, s: "v".repeat(i % 50) });` +
      " let total = 0; for (const [k, v] of m) total += v.i + v.s.length + k.length;" +
      " const copy = JSON.parse(JSON.stringify([...m.values()])); total + copy.length";
    const expected = (n: number) => {
      let total = 0;
      for (let i = 0; i < n; i++) total += i + (i % 50) + `k${i}`.length;
      return total + n;
    };
    const mismatches: string[] = [];
    for (let run = 0; run < 300; run++) {
      const n = 200 + ((run * 7919) % 3000);
      const result = await quickjs.execute(code(n));
      if (result.result !== expected(n))
        mismatches.push(`run ${run}: ${JSON.stringify(result.result ?? result.error)}`);
    }
    expect(mismatches).toEqual([]);
  });
});

describe("QuickJsEngine: deep recursion", () => {
  it("ends in the guest's own catchable RangeError on every path tried, and the host's timers still work at that depth", async () => {
    const quickjs = engine({ timeout: 10_000 });
    const paths = {
      plain: "function f(n) { return f(n + 1) } try { f(0) } catch (e) { e.name }",
      "array callback": "function f(n) { return [n].map(f) } try { f(0) } catch (e) { e.name }",
      getter: "const o = { get x() { return this.x } }; try { o.x } catch (e) { e.name }",
      proxy: "const p = new Proxy({}, { get(t, k, r) { return r[k] } }); try { p.a } catch (e) { e.name }",
      "bound functions":
        "let g = () => g(); for (let i = 0; i < 5; i++) g = g.bind(null); try { g() } catch (e) { e.name }",
      toString: "const o = { toString() { return String(o) } }; try { String(o) } catch (e) { e.name }",
      "async function": "async function f(n) { return f(n + 1) } try { await f(0) } catch (e) { e.name }",
    };
    const outcomes: Record<string, unknown> = {};
    for (const [name, code] of Object.entries(paths)) {
      const result = await quickjs.execute(code);
      outcomes[name] = result.success ? result.result : result.errorCode;
    }
    expect(outcomes).toEqual(Object.fromEntries(Object.keys(paths).map((name) => [name, "RangeError"])));
    // At the deepest level the guest reaches, it still schedules a timer through the host.
    const edge = await quickjs.execute(
      "let deepest = 0; function f(n) { deepest = n; return f(n + 1) } try { f(0) } catch {}" +
        " function down(n) { if (n === 0) return new Promise((resolve) => setTimeout(() => resolve('fired'), 1)); return down(n - 1) }" +
        " let fired; for (let n = deepest; n > 0 && fired === undefined; n -= 5) { try { fired = await down(n) } catch {} } fired",
    );
    expect({ success: edge.success, result: edge.result }).toEqual({ success: true, result: "fired" });
  });
});

describe("QuickJsEngine: memoryLimit caps the module's memory", () => {
  it("a run holds up to memoryLimit; past it the run ends SANDBOX_MEMORY_EXCEEDED even when the guest catches the error", async () => {
    const quickjs = engine({ memoryLimit: 32 * MIB, timeout: 30_000 });
    const hold = (mib: number) =>
      `const keep = []; for (let i = 0; i < ${mib}; i++) keep.push(new Uint8Array(${MIB}).fill(1)); keep.length`;
    const within = await quickjs.execute(hold(24));
    expect({ success: within.success, result: within.result }).toEqual({ success: true, result: 24 });
    expect(within.memoryUsed).toBeGreaterThanOrEqual(24 * MIB);
    const caught = await quickjs.execute(
      `let note = "not stopped"; try { ${hold(64)} } catch (error) { note = "caught: " + error.message } note`,
    );
    expect({ success: caught.success, errorCode: caught.errorCode }).toEqual({
      success: false,
      errorCode: "SANDBOX_MEMORY_EXCEEDED",
    });
    const strings = await quickjs.execute(
      "const parts = []; for (let i = 0; i < 64; i++) { const s = String(i % 10).repeat(1048576); s.charCodeAt(1); parts.push(s); } parts.length",
    );
    expect(strings.errorCode).toBe("SANDBOX_MEMORY_EXCEEDED");
    const after = await quickjs.execute(hold(24));
    expect({ success: after.success, result: after.result }).toEqual({ success: true, result: 24 });
  });
});

describe("QuickJsEngine: options", () => {
  it("refuses a bad option by name, value and fix", () => {
    expect(() => new QuickJsEngine({ maxIdleSlots: -1 })).toThrowError(
      "QuickJsEngine: maxIdleSlots must be a non-negative integer (got -1)",
    );
    expect(() => new QuickJsEngine({ breakOnSigint: "yes" as unknown as boolean })).toThrowError(
      "QuickJsEngine: breakOnSigint must be true or false (got string)",
    );
    expect(() => new QuickJsEngine({ timeout: 0 })).toThrowError(/timeout/);
  });
});
