// The README's "Node lines" table says which isolated-vm the Quick start installs (and CI tests)
// on each line; scripts/setup.mjs is what installs it. This keeps the two saying the same thing,
// and pins how setup picks a line's version.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

interface SetupModule {
  ISOLATED_VM_BY_NODE_LINE: Readonly<Record<number, string>>;
  isolatedVmForNodeLine(nodeMajor: number, table?: Readonly<Record<number, string>>): string | undefined;
  catalogIsolatedVm(workspaceYaml: string): string;
  withCatalogIsolatedVm(workspaceYaml: string, version: string): string;
}

const setup = (await import(pathToFileURL(join(ROOT, "scripts", "setup.mjs")).href)) as SetupModule;
const workspaceYaml = readFileSync(join(ROOT, "pnpm-workspace.yaml"), "utf8");

/** The README's Node lines table: the first column's major → the "installs" column. */
function readmeTable(): Record<number, string> {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Node lines"));
  const rows = section.split("\n").filter((line) => /^\| \d/.test(line));
  return Object.fromEntries(
    rows.map((row) => {
      const cells = row.split("|").map((cell) => cell.trim());
      return [Number.parseInt(cells[1] as string, 10), cells[3] as string];
    }),
  );
}

describe("Node lines", () => {
  it("the README's table names the isolated-vm setup installs on each supported line", () => {
    const catalog = setup.catalogIsolatedVm(workspaceYaml);
    const installs = (major: number) => setup.isolatedVmForNodeLine(major) ?? catalog;
    expect(readmeTable()).toEqual({ 20: installs(20), 22: installs(22), 24: installs(24) });
  });

  it("a line takes the nearest lower line's version, and the catalog's below them all", () => {
    const table = { 22: "6.2.0", 24: "7.0.1" };
    expect([20, 21, 22, 23, 24, 26].map((major) => setup.isolatedVmForNodeLine(major, table))).toEqual([
      undefined,
      undefined,
      "6.2.0",
      "6.2.0",
      "7.0.1",
      "7.0.1",
    ]);
  });

  it("rewrites the catalog's isolated-vm entry only, not allowBuilds", () => {
    const yaml = "allowBuilds:\n  isolated-vm: true\n\ncatalog:\n  isolated-vm: 5.0.4\n  zod: 4.6.7\n";
    expect(setup.catalogIsolatedVm(yaml)).toBe("5.0.4");
    expect(setup.withCatalogIsolatedVm(yaml, "7.0.1")).toBe(
      "allowBuilds:\n  isolated-vm: true\n\ncatalog:\n  isolated-vm: 7.0.1\n  zod: 4.6.7\n",
    );
    expect(() => setup.catalogIsolatedVm("catalog:\n  zod: 4.6.7\n")).toThrow(/no isolated-vm catalog entry/);
  });
});
