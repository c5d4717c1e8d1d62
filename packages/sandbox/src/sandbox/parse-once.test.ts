import { guestCodeParses } from "@suaveplan/sandbox-core/code-transformer";
import type { SandboxEngine } from "@suaveplan/sandbox-core/types";
import { ENGINE_NAMES } from "@suaveplan/sandbox-core/types";
import { IsolateEngine } from "@suaveplan/sandbox-isolate";
import { SpawnEngine } from "@suaveplan/sandbox-spawn";
import { VmEngine } from "@suaveplan/sandbox-vm";
import { WorkerEngine } from "@suaveplan/sandbox-worker";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./sandbox.js";

// Every built-in engine: one behaviour, one table.
const ENGINES = ENGINE_NAMES;

/**
 * A 64 KiB program that needs every step of the preparation: top-level
 * `await` (parsed and wrapped) and the word `import` (analysed for
 * `import()`), far past any size a cache by code text would keep.
 */
const PROGRAM = (() => {
  const head = 'let x = 0;\nawait null;\nconst note = "import is only a word here";\n';
  const line = "x = x + 1;\n";
  const lines = Math.ceil((64 * 1024 - head.length) / line.length);
  return `${head}${line.repeat(lines)}x`;
})();
const LINES = Math.ceil((64 * 1024 - 66) / 11);

/** How many times the code was parsed in this process while `run` ran, and what it resolved. */
async function parsesOf(run: () => Promise<{ success: boolean; result?: unknown }>) {
  const before = guestCodeParses();
  const { success, result } = await run();
  return { parses: guestCodeParses() - before, success, result };
}

describe("one parse per execution, at any code size", () => {
  const sandboxes: Sandbox[] = [];
  const engines: SandboxEngine[] = [];
  afterAll(async () => {
    await Promise.all([...sandboxes, ...engines].map((item) => item.destroy()));
  });

  it("the 64 KiB program is what it claims to be", () => {
    expect([PROGRAM.length >= 64 * 1024, PROGRAM.includes("await"), PROGRAM.includes("import")]).toEqual([
      true,
      true,
      true,
    ]);
  });

  it.each(ENGINES)(
    "%s: createSandbox parses it once (the facade's parse is handed down to the engine)",
    async (engine) => {
      const sandbox = createSandbox({ engine, timeout: 10_000 });
      sandboxes.push(sandbox);
      await sandbox.execute("1"); // the engine is loaded and started first
      expect(await parsesOf(() => sandbox.execute(PROGRAM))).toEqual({
        parses: 1,
        success: true,
        result: LINES,
      });
    },
  );

  it("a program sent again is parsed at most once; the sandbox keeps the parse of short code only", async () => {
    const sandbox = createSandbox({ engine: "vm" });
    sandboxes.push(sandbox);
    const short = "await null; 6 * 7";
    const long = `await null;\n${"let y = 1;\n".repeat(400)}42`; // over 2,000 characters
    const parses: number[] = [];
    for (const code of [short, short, long, long])
      parses.push((await parsesOf(() => sandbox.execute(code))).parses);
    // The short one's parse is kept with its verdict; the long one's is not (the engine parses it again).
    expect(parses).toEqual([1, 0, 1, 1]);
  });

  it.each(ENGINES)("%s: the engine alone parses it once", async (engine) => {
    const made =
      engine === "vm"
        ? new VmEngine({ timeout: 10_000 })
        : engine === "worker"
          ? new WorkerEngine({ timeout: 10_000 })
          : engine === "spawn"
            ? new SpawnEngine({ timeout: 10_000 })
            : new IsolateEngine({ timeout: 10_000 });
    engines.push(made);
    expect(await parsesOf(() => made.execute(PROGRAM))).toEqual({ parses: 1, success: true, result: LINES });
  });
});
