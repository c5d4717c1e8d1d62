import { ENGINE_NAMES, type SandboxEngine, type SandboxResult } from "@suaveplan/sandbox-core/types";
import { IsolateEngine } from "@suaveplan/sandbox-isolate";
import { QuickJsEngine } from "@suaveplan/sandbox-quickjs";
import { SpawnEngine } from "@suaveplan/sandbox-spawn";
import { VmEngine } from "@suaveplan/sandbox-vm";
import { WorkerEngine } from "@suaveplan/sandbox-worker";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSandbox, type Sandbox } from "./sandbox.js";

// Every built-in engine: one behaviour, one table.
const ENGINES = ENGINE_NAMES;
type Engine = (typeof ENGINES)[number];

/** One behaviour, one table: TypeScript snippets and the exact outcome every engine must give. */
const PARITY: {
  name: string;
  code: string;
  expected: Partial<SandboxResult>;
  onQuickJs?: Partial<SandboxResult>;
}[] = [
  {
    name: "annotations, interfaces and generics",
    code: `interface User { name: string; age?: number }
type Id = string | number;
const users: User[] = [{ name: "ada", age: 36 }, { name: "bob" }];
function total<T extends User>(list: readonly T[]): number {
  return list.reduce((n: number, u) => n + (u.age ?? 0), 0);
}
const id = 41 as Id;
({ total: total(users), id: (id as number) + 1, names: users.map((u): string => u.name) })`,
    expected: { success: true, result: { total: 36, id: 42, names: ["ada", "bob"] } },
  },
  {
    name: "classes with typed fields, satisfies, non-null and optional parameters",
    code: `class Box<T> {
  private value!: T;
  constructor(v: T) { this.value = v; }
  get(): T { return this.value; }
}
const config = { size: 2 } satisfies Record<string, number>;
function pad(s: string, width?: number): string { return s.padStart(width ?? 4, "-"); }
const box: Box<number> | undefined = new Box(config.size);
pad(String(box!.get() * 21))`,
    expected: { success: true, result: "--42" },
  },
  {
    name: "top-level await and return",
    code: `const wait = (ms: number): Promise<number> => new Promise((r) => setTimeout(() => r(ms), ms));
const n: number = await wait(1);
if (n > 0) return n + 41;
0`,
    expected: { success: true, result: 42 },
  },
  {
    name: "type-only imports and declarations are erased",
    code: `import type { Thing } from "nowhere";
declare const hidden: Thing;
type Pair<A, B> = [A, B];
const pair: Pair<string, number> = ["x", 1];
pair`,
    expected: { success: true, result: ["x", 1] },
  },
  {
    name: "a throw on line 3 names line 3 and its column",
    code: `const a: number = 1;
const b: string = "two";
  throw new RangeError(\`bad \${a as number} \${b}\`);`,
    expected: {
      success: false,
      errorCode: "SANDBOX_GUEST_ERROR",
      error: "RangeError: bad 1 two (line 3, column 9) (SANDBOX_GUEST_ERROR)",
      guestError: {
        name: "RangeError",
        message: "bad 1 two",
        stack: "RangeError: bad 1 two\n    at sandbox.js:3:9",
        line: 3,
        column: 9,
      },
    },
    // QuickJS's column of `new RangeError(…)` names the constructor (see capabilities.javascriptEngine).
    onQuickJs: {
      success: false,
      errorCode: "SANDBOX_GUEST_ERROR",
      error: "RangeError: bad 1 two (line 3, column 13) (SANDBOX_GUEST_ERROR)",
      guestError: {
        name: "RangeError",
        message: "bad 1 two",
        stack: "RangeError: bad 1 two\n    at sandbox.js:3:13",
        line: 3,
        column: 13,
      },
    },
  },
  {
    name: "a syntax error names its position in the TypeScript",
    code: `const a: number = 1;
const b: Array<string> = ;`,
    expected: {
      success: false,
      errorCode: "SANDBOX_SYNTAX_ERROR",
      error: "SyntaxError: Expression expected (line 2, column 26) (SANDBOX_SYNTAX_ERROR)",
      guestError: { name: "SyntaxError", message: "Expression expected", stack: "", line: 2, column: 26 },
    },
  },
  {
    name: "an enum is refused, naming the construct",
    code: `const x: number = 1;
enum Color { Red, Green }`,
    expected: {
      success: false,
      errorCode: "SANDBOX_SYNTAX_ERROR",
      guestError: {
        name: "SyntaxError",
        message:
          "TypeScript enum is not supported. TypeScript input only erases types (it does not compile), so constructs that would emit code (enum, namespace, parameter properties, <T>value assertions) are refused; rewrite it without them",
        stack: "",
        line: 2,
        column: 1,
      },
    },
  },
  {
    name: "a namespace is refused, naming the construct",
    code: "namespace Shapes { export const n = 1; }",
    expected: {
      success: false,
      errorCode: "SANDBOX_SYNTAX_ERROR",
      guestError: {
        name: "SyntaxError",
        message:
          "TypeScript namespace declaration is not supported. TypeScript input only erases types (it does not compile), so constructs that would emit code (enum, namespace, parameter properties, <T>value assertions) are refused; rewrite it without them",
        stack: "",
        line: 1,
        column: 1,
      },
    },
  },
  {
    name: "a parameter property is refused, naming the construct",
    code: "class P {\n  constructor(private x: number) {}\n}",
    expected: {
      success: false,
      errorCode: "SANDBOX_SYNTAX_ERROR",
      guestError: {
        name: "SyntaxError",
        message:
          "TypeScript parameter property is not supported. TypeScript input only erases types (it does not compile), so constructs that would emit code (enum, namespace, parameter properties, <T>value assertions) are refused; rewrite it without them",
        stack: "",
        line: 2,
        column: 23,
      },
    },
  },
];

/** What a result must match: its outcome fields, never timings or usage. */
function outcome(r: SandboxResult): Partial<SandboxResult> {
  const { success, result, errorCode, guestError } = r;
  return Object.fromEntries(
    Object.entries({ success, result, errorCode, guestError, error: r.error }).filter(
      ([, v]) => v !== undefined,
    ),
  );
}

/** A row's expected outcome on `engine`: QuickJS's own where the row gives one. */
function expectedOn(
  engine: SandboxEngine,
  row: { expected: Partial<SandboxResult>; onQuickJs?: Partial<SandboxResult> },
): Partial<SandboxResult> {
  return engine.capabilities.javascriptEngine === "quickjs" && row.onQuickJs !== undefined
    ? row.onQuickJs
    : row.expected;
}

function expectedOutcome(expected: Partial<SandboxResult>): Partial<SandboxResult> {
  return expected.success === false && expected.error === undefined
    ? { ...expected, error: expect.stringMatching(/\(SANDBOX_SYNTAX_ERROR\)$/) as unknown as string }
    : expected;
}

const makeEngine: Record<Engine, () => SandboxEngine> = {
  vm: () => new VmEngine({ timeout: 10_000 }),
  worker: () => new WorkerEngine({ timeout: 10_000 }),
  spawn: () => new SpawnEngine({ timeout: 10_000 }),
  isolate: () => new IsolateEngine({ timeout: 10_000 }),
  quickjs: () => new QuickJsEngine({ timeout: 10_000 }),
};

const engines = new Map<Engine, SandboxEngine>();
const sandboxes = new Map<Engine, Sandbox>();
afterAll(async () => {
  await Promise.all([...engines.values()].map((e) => e.destroy()));
  await Promise.all([...sandboxes.values()].map((s) => s.destroy()));
});
const engineOf = (name: Engine) => {
  let engine = engines.get(name);
  if (engine === undefined) {
    engine = makeEngine[name]();
    engines.set(name, engine);
  }
  return engine;
};
const sandboxOf = (name: Engine) => {
  let sandbox = sandboxes.get(name);
  if (sandbox === undefined) {
    sandbox = createSandbox({ engine: name, timeout: 10_000, language: "typescript" });
    sandboxes.set(name, sandbox);
  }
  return sandbox;
};

describe.each(ENGINES)("TypeScript input on the %s engine", (name) => {
  it.each(PARITY)("engine.execute(code, {}, { language: 'typescript' }): $name", async (row) => {
    const engine = engineOf(name);
    const r = await engine.execute(row.code, {}, { language: "typescript" });
    expect(outcome(r)).toEqual(expectedOutcome(expectedOn(engine, row)));
  });

  it.each(PARITY)("createSandbox({ language: 'typescript' }): $name", async (row) => {
    const r = await sandboxOf(name).execute(row.code);
    expect(outcome(r)).toEqual(expectedOutcome(expectedOn(engineOf(name), row)));
  });

  it("refuses a language it does not know, naming options.language", async () => {
    const r = await engineOf(name).execute("1", {}, { language: "python" } as never);
    expect(outcome(r)).toEqual({
      success: false,
      errorCode: "SANDBOX_INVALID_OPTIONS",
      error:
        'Invalid execution options: options.language: Invalid option: expected one of "javascript"|"typescript" (got "python") (SANDBOX_INVALID_OPTIONS)',
    });
  });

  it("registerModule({ source, language: 'typescript' }) erases the module's types too", async () => {
    const source = `const double = (n: number): number => n * 2;
module.exports = { double } satisfies Record<string, unknown>;`;
    const engine = makeEngine[name]();
    const sandbox = createSandbox({ engine: name, timeout: 10_000 });
    try {
      engine.registerModule({ name: "mathx", source, language: "typescript" });
      sandbox.registerModule({ name: "mathx", source, language: "typescript" });
      expect((await engine.execute("mathx.double(21)")).result).toBe(42);
      expect((await sandbox.execute("mathx.double(21)")).result).toBe(42);
      const bad = {
        name: "broken",
        source: "const x: number = 1;\nenum E { A }",
        language: "typescript",
      } as const;
      const refusal =
        "module broken: SyntaxError: TypeScript enum is not supported. TypeScript input only erases types (it does not compile), so constructs that would emit code (enum, namespace, parameter properties, <T>value assertions) are refused; rewrite it without them (line 2, column 1) (SANDBOX_INVALID_MODULE)";
      expect(() => engine.registerModule(bad)).toThrow(refusal);
      expect(() => sandbox.registerModule(bad)).toThrow(refusal);
    } finally {
      await engine.destroy();
      await sandbox.destroy();
    }
  });

  it("runs TypeScript as JavaScript only when asked: by default it is a SyntaxError", async () => {
    const r = await engineOf(name).execute("const n: number = 41; n + 1");
    expect({ success: r.success, errorCode: r.errorCode }).toEqual({
      success: false,
      errorCode: "SANDBOX_SYNTAX_ERROR",
    });
  });
});

describe("TypeScript options of createSandbox", () => {
  const live: Sandbox[] = [];
  afterEach(async () => {
    await Promise.all(live.splice(0).map((s) => s.destroy()));
  });
  const make = (config: Parameters<typeof createSandbox>[0]) => {
    const sandbox = createSandbox({ timeout: 10_000, ...config });
    live.push(sandbox);
    return sandbox;
  };

  it("a per-execution language wins over the sandbox's", async () => {
    const sandbox = make({ language: "typescript" });
    expect((await sandbox.execute("const n: number = 41; n + 1")).result).toBe(42);
    const js = await sandbox.execute("const n: number = 41; n + 1", {}, { language: "javascript" });
    expect(js.errorCode).toBe("SANDBOX_SYNTAX_ERROR");
    const ts = await make({}).execute("const n: number = 41; n + 1", {}, { language: "typescript" });
    expect(ts.result).toBe(42);
  });

  it("rejects bad config values, naming the field", () => {
    expect(() => createSandbox({ language: "python" } as never)).toThrow(
      'Invalid sandbox config: config.language: Invalid option: expected one of "javascript"|"typescript" (got "python") (SANDBOX_INVALID_CONFIG)',
    );
    expect(() => createSandbox({ typecheck: true })).toThrow(
      'Invalid sandbox config: config.typecheck: needs language "typescript" (set config.language); JavaScript is not type-checked (SANDBOX_INVALID_CONFIG)',
    );
    expect(() => createSandbox({ language: "typescript", typecheck: "yes" } as never)).toThrow(
      "Invalid sandbox config: config.typecheck: must be a boolean (got string) (SANDBOX_INVALID_CONFIG)",
    );
  });

  it("resolves bad execution options, naming the field", async () => {
    const sandbox = make({});
    expect(outcome(await sandbox.execute("1", {}, { typecheck: true }))).toEqual({
      success: false,
      errorCode: "SANDBOX_INVALID_OPTIONS",
      error:
        'Invalid execution options: options.typecheck: needs language "typescript" (set options.language); JavaScript is not type-checked (SANDBOX_INVALID_OPTIONS)',
    });
    expect(outcome(await sandbox.execute("1", {}, { language: "ts" } as never))).toEqual({
      success: false,
      errorCode: "SANDBOX_INVALID_OPTIONS",
      error:
        'Invalid execution options: options.language: Invalid option: expected one of "javascript"|"typescript" (got "ts") (SANDBOX_INVALID_OPTIONS)',
    });
  });

  it("still applies the transformer's rules to TypeScript (after the types are erased)", async () => {
    const r = await make({ language: "typescript" }).execute("const p: unknown = process; p");
    expect({ success: r.success, errorCode: r.errorCode }).toEqual({
      success: false,
      errorCode: "SANDBOX_CODE_BLOCKED",
    });
  });
});

describe("typecheck", () => {
  const calls: unknown[] = [];
  const lookup = {
    description: "Look a user up by id",
    inputSchema: z.object({ id: z.string() }),
    outputSchema: z.object({ name: z.string(), age: z.number() }),
    execute: async (input: { id: string }) => {
      calls.push(input);
      return { name: `user ${input.id}`, age: 36 };
    },
  };
  const live: Sandbox[] = [];
  afterEach(async () => {
    calls.length = 0;
    await Promise.all(live.splice(0).map((s) => s.destroy()));
  });
  const make = (config: Parameters<typeof createSandbox>[0] = {}) => {
    const sandbox = createSandbox({ timeout: 20_000, language: "typescript", tools: { lookup }, ...config });
    live.push(sandbox);
    return sandbox;
  };

  it.each(ENGINES)("a program that type-checks runs, with its tool calls (%s)", async (engine) => {
    const sandbox = make({ engine, typecheck: true });
    const r = await sandbox.execute(
      `const user = await tools.lookup({ id: "7" });
const label: string = \`\${user.name} (\${user.age + offset})\`;
console.log(label);
label`,
      { offset: 1 },
    );
    expect(outcome(r)).toEqual({ success: true, result: "user 7 (37)" });
    expect(r.logs).toEqual([{ level: "log", message: "user 7 (37)" }]);
    expect(calls).toEqual([{ id: "7" }]);
  });

  it("a type error fails before anything runs: diagnostics at the original positions, no tool called", async () => {
    const sandbox = make({ typecheck: true });
    const r = await sandbox.execute(`const first = await tools.lookup({ id: "1" });
console.log("never printed");
const user = await tools.lookup({ id: 7 });
const n: number = user.name;
n`);
    expect(outcome(r)).toEqual({
      success: false,
      errorCode: "SANDBOX_TYPECHECK_FAILED",
      error:
        "TypeScript found 2 errors, nothing ran: line 3, column 35: Type 'number' is not assignable to type 'string'. (TS2322); line 4, column 7: Type 'string' is not assignable to type 'number'. (TS2322) (SANDBOX_TYPECHECK_FAILED)",
    });
    expect(r.diagnostics).toEqual([
      { line: 3, column: 35, message: "Type 'number' is not assignable to type 'string'.", code: 2322 },
      { line: 4, column: 7, message: "Type 'string' is not assignable to type 'number'.", code: 2322 },
    ]);
    expect(r.logs).toEqual([]);
    expect(r.calls).toEqual([]);
    expect(calls).toEqual([]);
  });

  it("checks against the per-execution tools, the context and the guest globals; host globals are unknown", async () => {
    const sandbox = make();
    const r = await sandbox.execute(
      `const t: number = setTimeout(() => {}, 1);
clearTimeout(t);
const w = await tools.weather({ city: greeting.city });
process.exit(w.tempC);`,
      { greeting: { city: "Paris" } },
      {
        typecheck: true,
        tools: {
          weather: {
            inputSchema: z.object({ city: z.string() }),
            outputSchema: z.object({ tempC: z.number() }),
            execute: async () => ({ tempC: 1 }),
          },
        },
      },
    );
    expect(r.diagnostics?.map((d) => [d.line, d.column, d.code])).toEqual([[4, 1, 2591]]);
  });

  it("a per-execution typecheck: false skips the sandbox's", async () => {
    const r = await make({ typecheck: true }).execute(
      "const n: number = 'x' as any; n",
      {},
      { typecheck: false },
    );
    expect(outcome(r)).toEqual({ success: true, result: "x" });
    const checked = await make({ typecheck: true }).execute("const n: number = 'x'; n");
    expect(checked.diagnostics).toEqual([
      { line: 1, column: 7, message: "Type 'string' is not assignable to type 'number'.", code: 2322 },
    ]);
  });

  it("executeFunction runs the function's JavaScript even in a typecheck sandbox", async () => {
    const sandbox = make({ typecheck: true });
    const r = await sandbox.executeFunction((a: number, b: number) => a * b, [6, 7]);
    expect(outcome(r)).toEqual({ success: true, result: 42 });
  });

  it("destroy() ends the typecheck worker; the sandbox refuses later runs", async () => {
    const sandbox = make({ typecheck: true });
    expect((await sandbox.execute("const n: number = 1; n")).result).toBe(1);
    await sandbox.destroy();
    await sandbox.destroy();
    const r = await sandbox.execute("const n: number = 1; n");
    expect(r.errorCode).toBe("SANDBOX_ENGINE_DISPOSED");
  });
});
