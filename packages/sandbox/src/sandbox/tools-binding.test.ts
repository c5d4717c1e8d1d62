import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { ENGINE_NAMES } from "@suaveplan/sandbox-core/types";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSandbox, type Sandbox } from "./sandbox.js";

/** Every engine must give the same answers (worker, spawn and isolate's helper run the built kernel). */
// Every built-in engine: one behaviour, one table.
const ENGINES = ENGINE_NAMES;

const live: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(live.splice(0).map((sandbox) => sandbox.destroy()));
});
const sandboxOf = (config: Parameters<typeof createSandbox>[0]) => {
  const sandbox = createSandbox({ timeout: 10_000, ...config });
  live.push(sandbox);
  return sandbox;
};

const ran: string[] = [];
const tools = {
  deleteUser: {
    inputSchema: z.object({ userId: z.string() }),
    execute: async ({ userId }: { userId: string }) => {
      ran.push(userId);
      return `deleted ${userId}`;
    },
  },
};

/** One table: what guest code that tries to replace the `tools` binding sees; every engine must say the same. */
const TOOLS_BINDING_ROWS = [
  {
    name: "sloppy assignment fails silently, as the language does for a non-writable binding",
    code: `tools = { deleteUser: async () => "fake" }; await tools.deleteUser({ userId: "a" })`,
    expected: "deleted a",
  },
  {
    name: "strict assignment throws a TypeError",
    code: `let seen; try { (function () { "use strict"; tools = {}; })(); } catch (e) { seen = [e instanceof TypeError, e.name]; } seen`,
    expected: [true, "TypeError"],
  },
  {
    name: "delete fails and the binding stays",
    code: `const deleted = delete tools; [deleted, typeof tools.deleteUser, Object.isFrozen(tools)]`,
    expected: [false, "function", true],
  },
  {
    name: "a tool of the frozen object cannot be replaced",
    code: `tools.deleteUser = async () => "fake"; await tools.deleteUser({ userId: "b" })`,
    expected: "deleted b",
  },
] as const;

describe.each(ENGINES)("the guest's tools binding (%s)", (engine) => {
  it.each(TOOLS_BINDING_ROWS)("$name", async ({ code, expected }) => {
    ran.length = 0;
    const sandbox = sandboxOf({ engine, tools });
    const r = await sandbox.execute(code);
    expect({ success: r.success, result: r.result, error: r.error }).toEqual({
      success: true,
      result: expected,
      error: undefined,
    });
  });
});

describe.each(ENGINES)("a context value named tools (%s)", (engine) => {
  it("is refused with a coded error while host tools are configured, instead of being dropped silently", async () => {
    const sandbox = sandboxOf({ engine, tools });
    const r = await sandbox.execute("tools", { tools: { mine: 1 } });
    expect({ success: r.success, errorCode: r.errorCode, error: r.error }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.INVALID_OPTIONS,
      error:
        "context.tools: the guest's tools global is the sandbox's tools and cannot be replaced by a context value; give the value another name (SANDBOX_INVALID_OPTIONS)",
    });
    const plain = sandboxOf({ engine });
    expect((await plain.execute("tools.mine", { tools: { mine: 1 } })).result).toBe(1);
  });
});

describe("registerModule and the name tools", () => {
  it('registerModule({ name: "tools" }) is refused with a coded error naming the fix; the real handlers keep running', async () => {
    ran.length = 0;
    const sandbox = sandboxOf({ engine: "vm", tools });
    let caught: unknown;
    try {
      sandbox.registerModule({ name: "tools", exports: { deleteUser: "fake" } });
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({
      code: SANDBOX_CODES.INVALID_MODULE,
      message: expect.stringContaining(
        '"tools" is reserved for the host tools global (a module would replace it, and the tool handlers would never run); give host functions as createSandbox({ tools })',
      ),
    });
    const r = await sandbox.execute(`await tools.deleteUser({ userId: "c" })`);
    expect(r.result).toBe("deleted c");
    expect(ran).toEqual(["c"]);
  });
});
