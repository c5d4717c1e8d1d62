import * as vm from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toGuestScript } from "./guest-script.js";

/** A failing call, synchronous so the await-free version can throw it too. */
const fail = (message: string): never => {
  throw new Error(message);
};

/** The value the wrapped (async) script resolves to. */
const asyncValue = (code: string): Promise<unknown> => {
  const script = toGuestScript(code);
  expect(script.async).toBe(true);
  return vm.runInNewContext(script.source, { fail });
};
/** The completion value V8 gives the same script with its awaits taken out. */
const syncValue = (code: string): unknown =>
  vm.runInNewContext(code.replaceAll("for await", "for").replaceAll("await ", ""), { fail });

/** Programs whose completion value the async wrapper must keep; each uses `await ` at top level. */
const PROGRAMS = [
  "await 1; 2",
  "await 1; if (true) { 6 }",
  "await 1; if (false) { 6 }",
  "await 1; if (false) { 6 } else { 7 }",
  "1; if (await false) {}",
  "const n = await 5; switch (n) { case 5: 'five' }",
  "const n = await 4; switch (n) { case 5: 'five'; break; default: 'other' }",
  "const n = await 5; switch (n) { case 5: 'five'; case 6: 'six' }",
  "try { await fail('boom') } catch (e) { e.message }",
  "try { 1; await fail('x') } catch { }",
  "try { await 'tried' } finally { 'finally ignored' }",
  "try { await 'tried' } catch { 'caught' } finally { 'finally ignored'; }",
  "await 0; try { 'inner' } finally { try { 'x' } finally { 'y' } }",
  "await 1; var x = 2",
  "await 1; let y = 2",
  "await 1; const z = 2",
  "await 1; {}",
  "await 1; ;",
  "await 1; function f() { return 9 }",
  "await 1; class C {}",
  "let s = 0; for (const v of [1, 2, 3]) { s += await v; }",
  "let s = 0; for (const v of [1, 2, 3]) { s += await v; s * 10 }",
  "let out = []; for (const v of [1, 2]) { out.push(await v); } out.join()",
  "let s = 0; for await (const v of [1, 2]) s += v; s",
  "let i = 0; while (true) { i++; if (i > 2) break; await i; i * 100 }",
  "await 1; while (true) { 2; break; }",
  "await 1; while (false) { 2 }",
  "let i = 0; do { i += await 1 } while (i < 3)",
  "let k; for (k in { a: 1, b: 2 }) { await k; k + '!' }",
  "await 1; for (let i = 0; i < 3; i++) { if (i === 1) continue; i }",
  "await 1; outer: { 'labelled'; break outer; 'never' }",
  "await 1; outer: for (const a of [1, 2]) { for (const b of [3, 4]) { a * b; break outer; } }",
  "await 1; lbl: while (true) { 'in loop'; break lbl }",
  "await 1; if (true) while (false) {}",
  "await 1; if (true) for (const q of [5]) q * 2; else 0",
  "await 1; 'a'\n'b'",
  "const a = await 20\nconst b = 22\na + b",
  "await 1; ({ v: 1 }).v",
  "await 1; [1, 2].map((v) => { if (v) { v } return v * 3 }).join()",
  "'use strict'; await 1; typeof this",
  "await 1; var undefined = 5; if (false) {}",
];

describe("completion values after top-level await", () => {
  it.each(PROGRAMS)("%j completes as it does without await", async (code) => {
    expect(await asyncValue(code)).toStrictEqual(syncValue(code));
  });

  it("pins the values that motivated the fix", async () => {
    await expect(
      asyncValue("try { await Promise.reject(new Error('no')) } catch (e) { e.message }"),
    ).resolves.toBe("no");
    await expect(asyncValue("await 1; if (true) { 6 }")).resolves.toBe(6);
    await expect(asyncValue("const n = await 5; switch (n) { case 5: 'five' }")).resolves.toBe("five");
    await expect(asyncValue("await 1; var x = 2")).resolves.toBe(1);
  });

  it("keeps a top-level return's value", async () => {
    await expect(asyncValue("await 1; if (true) return 'early'; 'late'")).resolves.toBe("early");
    await expect(asyncValue("await 1; 5; return;")).resolves.toBe(undefined);
  });

  it("adds no line and keeps directives first", () => {
    const code = "'use strict';\nawait 1;\nif (true) { 2 }\nlet x = 3";
    const { source } = toGuestScript(code);
    expect(
      source
        .split("\n")
        .slice(0, 4)
        .map((line) => line.replace(/\$sandbox\$completion/g, "$c")),
    ).toEqual([
      "(async () => {'use strict';",
      "$c = (await 1);",
      "$c = void 0;if (true) { $c = (2); }",
      "let x = 3",
    ]);
  });

  it("does not collide with code that names the completion variable", async () => {
    await expect(asyncValue("let $sandbox$completion = await 1; $sandbox$completion + 1")).resolves.toBe(2);
  });

  it("matches the completion value of random statement trees", async () => {
    // Random programs from value statements, declarations, ifs, blocks, loops with break, try/catch/finally and switch.
    const leaf = fc.oneof(
      fc.integer({ min: 0, max: 99 }).map((n) => `${n};`),
      fc.constant("var d = 1;"),
      fc.constant("{ let e = 1; }"),
      fc.constant(";"),
      fc.constant("{}"),
    );
    const { statement } = fc.letrec<{ statement: string; list: string }>((tie) => ({
      list: fc.array(tie("statement"), { maxLength: 3 }).map((items) => items.join(" ")),
      statement: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        leaf,
        fc
          .tuple(fc.boolean(), tie("list"), tie("list"))
          .map(([c, a, b]) => `if (${c}) { ${a} } else { ${b} }`),
        tie("list").map((a) => `{ ${a} }`),
        tie("list").map((a) => `for (const i of [1, 2]) { ${a} }`),
        tie("list").map((a) => `while (true) { ${a} break; }`),
        fc.tuple(tie("list"), tie("list")).map(([a, b]) => `try { ${a} throw 0; } catch { ${b} }`),
        fc.tuple(tie("list"), tie("list")).map(([a, b]) => `try { ${a} } finally { ${b} }`),
        fc
          .tuple(fc.integer({ min: 0, max: 2 }), tie("list"), tie("list"))
          .map(([n, a, b]) => `switch (${n}) { case 1: ${a} case 2: ${b} }`),
      ),
    }));
    // V8 departs from the spec for a `try` nested in a loop or switch (see the test below), so
    // those trees are left out of the comparison with V8.
    const comparable = statement.filter((code) => !/\b(?:for|while|switch)\b.*\btry\b/s.test(code));
    await fc.assert(
      fc.asyncProperty(fc.array(comparable, { maxLength: 4 }), async (statements) => {
        const code = `await 0; ${statements.join("\n")}`;
        expect(await asyncValue(code)).toStrictEqual(syncValue(code));
      }),
      { numRuns: 200 },
    );
  });

  it("follows the spec where V8's own completion value departs from it", async () => {
    // A catch's completion is UpdateEmpty(catch block, undefined) (ECMAScript TryStatement), so
    // this is undefined; V8 gives 0 when the try sits in a loop and holds a loop left by break.
    const code = "for (const i of [1]) { try { while (true) { await 0; break; } throw 0 } catch {} }";
    expect(syncValue(code)).toBe(0);
    await expect(asyncValue(code)).resolves.toBe(undefined);
    await expect(asyncValue("await 0; try { while (true) { 0; break; } throw 0 } catch {}")).resolves.toBe(
      syncValue("try { while (true) { 0; break; } throw 0 } catch {}"),
    );
  });
});
