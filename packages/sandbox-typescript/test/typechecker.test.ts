import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createTypechecker, TYPECHECK_MEMORY_LIMIT_BYTES } from "../src/typechecker.js";

const checker = createTypechecker();
afterAll(() => checker.destroy());

const TOOLS = `declare const tools: {
  /** Look a user up */
  lookup(input: { id: string }): Promise<{ name: string; age: number }>;
};`;

describe("createTypechecker", () => {
  it("passes a program that type-checks: top-level await and return, the guest globals, tools", async () => {
    const code = `const user = await tools.lookup({ id: "1" });
const t: number = setTimeout(() => console.log(user.name), 1);
clearTimeout(t);
queueMicrotask(() => console.debug("x"));
if (user.age > 1) return user.age;
user.name.toUpperCase()`;
    expect(await checker.check({ code, declarations: TOOLS })).toEqual({ ok: true });
  });

  it("fails with every diagnostic as data, at 1-based positions in the code as written", async () => {
    const code = `const user = await tools.lookup({ id: 7 });
const n: number = user.name;
user.nmae;`;
    expect(await checker.check({ code, declarations: TOOLS })).toEqual({
      ok: false,
      result: {
        duration: 0,
        logs: [],
        success: false,
        errorCode: "SANDBOX_TYPECHECK_FAILED",
        error:
          "TypeScript found 3 errors, nothing ran: line 1, column 35: Type 'number' is not assignable to type 'string'. (TS2322); line 2, column 7: Type 'string' is not assignable to type 'number'. (TS2322); line 3, column 6: Property 'nmae' does not exist on type '{ name: string; age: number; }'. (TS2339) (SANDBOX_TYPECHECK_FAILED)",
        diagnostics: [
          { line: 1, column: 35, message: "Type 'number' is not assignable to type 'string'.", code: 2322 },
          { line: 2, column: 7, message: "Type 'string' is not assignable to type 'number'.", code: 2322 },
          {
            line: 3,
            column: 6,
            message: "Property 'nmae' does not exist on type '{ name: string; age: number; }'.",
            code: 2339,
          },
        ],
      },
    });
  });

  it("knows no host globals and no DOM", async () => {
    const outcome = await checker.check({ code: "process.exit(1);\ndocument.title;\nrequire('fs');" });
    expect(outcome.ok ? [] : outcome.result.diagnostics?.map((d) => [d.line, d.code])).toEqual([
      [1, 2591],
      [2, 2584],
      [3, 2591],
    ]);
  });

  it("reports syntax errors too, and nothing carries a host path", async () => {
    const outcome = await checker.check({ code: "const a: = 1;" });
    expect(outcome.ok).toBe(false);
    expect(outcome.ok ? [] : outcome.result.diagnostics).toEqual([
      { line: 1, column: 10, message: "Type expected.", code: 1110 },
    ]);
    expect(JSON.stringify(outcome)).not.toContain("/node_modules/");
  });

  it("each program is its own: declarations of one check do not leak into the next", async () => {
    expect(await checker.check({ code: "tools.lookup({ id: 'a' })", declarations: TOOLS })).toEqual({
      ok: true,
    });
    const outcome = await checker.check({ code: "tools.lookup({ id: 'a' })" });
    expect(outcome.ok ? [] : outcome.result.diagnostics?.map((d) => d.code)).toEqual([2304]);
  });

  it("a destroyed checker resolves SANDBOX_ENGINE_DISPOSED; destroy is idempotent", async () => {
    const own = createTypechecker();
    expect(await own.check({ code: "1" })).toEqual({ ok: true });
    await own.destroy();
    await own.destroy();
    const outcome = await own.check({ code: "1" });
    expect(outcome.ok ? undefined : outcome.result.errorCode).toBe("SANDBOX_ENGINE_DISPOSED");
  });

  it("a check over its time limit resolves SANDBOX_TIMEOUT and the next check starts a fresh process", async () => {
    const own = createTypechecker();
    try {
      const slow = await own.check({ code: "const a: number = 1;", timeoutMs: 1 });
      expect(slow.ok ? undefined : slow.result.error).toBe(
        "typecheck did not finish in 1 ms; shorten the code or turn typecheck off (SANDBOX_TIMEOUT)",
      );
      expect(await own.check({ code: "const a: number = 1;" })).toEqual({ ok: true });
    } finally {
      await own.destroy();
    }
  });

  it("a type bomb past the memory limit resolves SANDBOX_MEMORY_EXCEEDED, the host lives on and the next check gets a fresh compiler", async () => {
    // Six chains of doubling template-literal types: without a limit the compiler took ~500 MiB
    // for a24 (and 2 GiB and more a few doublings later); a worker's resourceLimits could not hold
    // it either, V8 aborted the whole process on the strings' allocation (nodejs/node#47224).
    let bomb = "";
    for (const c of "abcdef") {
      bomb += `type ${c}0 = "${c}b";\n`;
      for (let i = 1; i <= 24; i++) bomb += `type ${c}${i} = \`\${${c}${i - 1}}\${${c}${i - 1}}\`;\n`;
      bomb += `const ${c}: ${c}24 = "x";\n`;
    }
    const own = createTypechecker({ memoryLimit: 128 * 1024 * 1024 });
    try {
      expect(await own.check({ code: bomb, timeoutMs: 60_000 })).toEqual({
        ok: false,
        result: {
          duration: 0,
          logs: [],
          success: false,
          errorCode: "SANDBOX_MEMORY_EXCEEDED",
          error:
            "typecheck ran out of its 128 MiB of memory and was ended, nothing ran; the code's types are too large to check (simplify them or turn typecheck off) (SANDBOX_MEMORY_EXCEEDED)",
        },
      });
      const next = await own.check({ code: "const s: string = 1;" });
      expect(next.ok ? [] : next.result.diagnostics).toEqual([
        { line: 1, column: 7, message: "Type 'number' is not assignable to type 'string'.", code: 2322 },
      ]);
    } finally {
      await own.destroy();
    }
  });

  it("refuses a memory limit below 64 MiB, and defaults to 512 MiB", () => {
    expect(() => createTypechecker({ memoryLimit: 1024 })).toThrow(
      "createTypechecker: memoryLimit must be an integer number of bytes, at least 64 MiB (got 1024) (SANDBOX_INVALID_CONFIG)",
    );
    expect(TYPECHECK_MEMORY_LIMIT_BYTES).toBe(512 * 1024 * 1024);
  });

  it("warm() starts the compiler in the background without keeping the process alive", () => {
    const entry = fileURLToPath(new URL("../dist/index.js", import.meta.url));
    const script = `import { createTypechecker } from ${JSON.stringify(entry)};
createTypechecker().warm();
console.log("warming");`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 20_000,
    });
    expect({ status: run.status, stdout: run.stdout, signal: run.signal }).toEqual({
      status: 0,
      stdout: "warming\n",
      signal: null,
    });
  });

  it("destroy() of an idle checker resolves once its process has exited", () => {
    const entry = fileURLToPath(new URL("../dist/index.js", import.meta.url));
    const script = `import { createTypechecker } from ${JSON.stringify(entry)};
const c = createTypechecker();
await c.check({ code: "1" });
await c.destroy();
console.log("destroyed");`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 20_000,
    });
    expect({ status: run.status, stdout: run.stdout, signal: run.signal }).toEqual({
      status: 0,
      stdout: "destroyed\n",
      signal: null,
    });
  });

  it("a warmed checker answers its first check", async () => {
    const own = createTypechecker();
    try {
      own.warm();
      own.warm();
      const outcome = await own.check({ code: "const s: string = 1;" });
      expect(outcome.ok ? [] : outcome.result.diagnostics?.map((d) => d.code)).toEqual([2322]);
    } finally {
      await own.destroy();
    }
  });

  it("an idle compiler process does not keep the process alive", () => {
    const entry = fileURLToPath(new URL("../dist/index.js", import.meta.url));
    const script = `import { createTypechecker } from ${JSON.stringify(entry)};
const c = createTypechecker();
const r = await c.check({ code: "const n: number = 'x'" });
console.log(r.ok ? "ok" : r.result.diagnostics.length);`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 20_000,
    });
    expect({ status: run.status, stdout: run.stdout, signal: run.signal }).toEqual({
      status: 0,
      stdout: "1\n",
      signal: null,
    });
  });
});
