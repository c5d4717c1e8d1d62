import { createContext, Script } from "node:vm";
import { describe, expect, it } from "vitest";
import { partExpression } from "../../test/support/part-script.js";

const INSTALL_ERRORS = partExpression(new URL("./install-errors.ts", import.meta.url), "installErrors");

/** Install the errors part in a fresh context, then run `code` as the guest file `g.js`. */
function run(code: string, plainFrames?: boolean): Promise<unknown> {
  const context = createContext({});
  const config = { guestFilename: "g.js", moduleFilenamePrefix: "m:", moduleWrapperLength: 0, plainFrames };
  new Script(
    `globalThis.kit = { config: ${JSON.stringify(config)} }; (${INSTALL_ERRORS})(kit);`,
  ).runInContext(context);
  return new Script(code, { filename: "g.js" }).runInContext(context) as Promise<unknown>;
}

const STACKS = `(async () => {
  class Boom { constructor() { throw new Error("in a constructor"); } }
  async function late() { await null; throw new Error("late"); }
  const unnamed = new Error("m"); unnamed.name = "";
  const built = (() => { try { new Boom(); } catch (e) { return e; } })();
  return [await late().catch((e) => e.stack), built.stack, unnamed.stack];
})()`;

describe("installErrors: stack styles", () => {
  it("by default marks async and constructor frames and heads a nameless error Error", async () => {
    expect(await run(STACKS)).toEqual([
      "Error: late\n    at late (g.js:3:45)\n    at async g.js:6:11",
      "Error: in a constructor\n    at new Boom (g.js:2:38)\n    at g.js:5:32\n    at g.js:5:72\n    at g.js:7:3",
      "Error: m\n    at g.js:4:19\n    at g.js:7:3",
    ]);
  });

  it("with plainFrames writes frames bare and heads a nameless error by its message (the plugin host's style)", async () => {
    expect(await run(STACKS, true)).toEqual([
      "Error: late\n    at late (g.js:3:45)\n    at g.js:6:11",
      "Error: in a constructor\n    at Boom (g.js:2:38)\n    at g.js:5:32\n    at g.js:5:72\n    at g.js:7:3",
      "m\n    at g.js:4:19\n    at g.js:7:3",
    ]);
  });
});

describe("installErrors: callerPosition", () => {
  it("finds where guest code called a function, and leaves later stacks formatted", async () => {
    const code = `(async () => {
  function probe() { return kit.callerPosition(probe); }
  const at = probe();
  return [at, new Error("after").stack];
})()`;
    const [position, stack] = (await run(code, true)) as [unknown, string];
    expect({ ...(position as object) }).toEqual({ file: "g.js", line: 3, column: 14 });
    expect(stack).toBe("Error: after\n    at g.js:4:15\n    at g.js:5:3");
  });
});
