import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isInside, resolvePluginSpecifier } from "./resolve-plugin-specifier.js";

let base: string;
let root: string;
beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "resolve-specifier-")));
  root = join(base, "plugin");
  await mkdir(join(root, "lib"), { recursive: true });
  await writeFile(join(root, "main.mjs"), "");
  await writeFile(join(root, "lib/util.js"), "");
  await writeFile(join(root, "lib/data.json"), "{}");
  await writeFile(join(root, "a b.mjs"), "");
  await writeFile(join(base, "outside.mjs"), "");
  await symlink(join(base, "outside.mjs"), join(root, "lib/escape.mjs"));
  await symlink(join(root, "lib/util.js"), join(root, "alias.mjs"));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function outcome(specifier: string, referrer = join(root, "main.mjs")): Promise<string> {
  try {
    return (await resolvePluginSpecifier(specifier, referrer, root)).slice(root.length);
  } catch (error) {
    return (error as { code: string }).code;
  }
}

describe("resolvePluginSpecifier", () => {
  it("resolves relative specifiers inside the plugin folder to real paths", async () => {
    expect(
      await Promise.all([
        outcome("./lib/util.js"),
        outcome("../main.mjs", join(root, "lib/util.js")),
        outcome("./a%20b.mjs"),
        outcome("./alias.mjs"),
      ]),
    ).toEqual(["/lib/util.js", "/main.mjs", "/a b.mjs", "/lib/util.js"]);
  });

  it("forbids everything else with SAND_VM_MODULE_IMPORT_FORBIDDEN", async () => {
    const specifiers = [
      "node:fs",
      "fs",
      "@scope/pkg",
      "/etc/passwd",
      `file://${join(base, "outside.mjs")}`,
      "data:text/javascript,export default 1",
      "https://example.com/x.mjs",
      "../outside.mjs",
      "./lib/escape.mjs",
      "./lib/data.json",
      "./main.mjs?v=2",
      "./main.mjs#x",
    ];
    expect(await Promise.all(specifiers.map((s) => outcome(s)))).toEqual(
      Array(specifiers.length).fill("SAND_VM_MODULE_IMPORT_FORBIDDEN"),
    );
  });

  it("reports a missing file as SAND_VM_MODULE_LOAD_FAILED", async () => {
    expect(await outcome("./nope.mjs")).toBe("SAND_VM_MODULE_LOAD_FAILED");
  });

  it("isInside compares whole path segments", () => {
    expect([
      isInside("/a/b", "/a/b"),
      isInside("/a/b", "/a/b/c"),
      isInside("/a/b", "/a/bc"),
      isInside("/a/b", "/a"),
      isInside("/a/b", "/a/b/..x"),
    ]).toEqual([true, true, false, false, true]);
  });
});
