import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadToolModule } from "./load-tool-module.js";

const scratch = mkdtempSync(join(tmpdir(), "suaveplan-tool-module-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const PAGE = "(SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md";

describe("loadToolModule", () => {
  it("imports the default export, relative to the base directory", async () => {
    writeFileSync(
      join(scratch, "tools.mjs"),
      "export default { add: { inputSchema: { type: 'object' }, execute: async () => 3 } };",
    );
    const tools = await loadToolModule("tools.mjs", scratch);
    expect(Object.keys(tools)).toEqual(["add"]);
    expect(await loadToolModule(join(scratch, "tools.mjs"), "/")).toBe(tools);
  });

  it("a module that does not import, or exports no object, is SANDBOX_INVALID_CONFIG naming it", async () => {
    await expect(loadToolModule("missing.mjs", scratch)).rejects.toMatchObject({
      code: "SANDBOX_INVALID_CONFIG",
      message: expect.stringMatching(/^cannot import the tools module "missing\.mjs": /),
    });
    writeFileSync(join(scratch, "list.mjs"), "export default [1, 2];");
    await expect(loadToolModule("list.mjs", scratch)).rejects.toMatchObject({
      message: `the tools module "list.mjs" must default-export an object of tools by name ${PAGE}`,
    });
    await expect(loadToolModule("", scratch)).rejects.toMatchObject({
      message: `tools module: the path must be a non-empty string ${PAGE}`,
    });
  });
});
