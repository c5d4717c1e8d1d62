import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { afterEach, describe, expect, it } from "vitest";
import { createIsolatedVmFactory } from "./isolated-vm-factory.js";

const dirs: string[] = [];

/**
 * A real project directory with the given node_modules packages (name →
 * files). Its own node_modules wins over NODE_PATH, which pnpm sets for
 * scripts; the "not installed" case runs in a child without it
 * (test/node-host.test.ts).
 */
function project(packages: Record<string, Record<string, string>> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "suaveplan-ivm-"));
  dirs.push(dir);
  for (const [name, files] of Object.entries(packages)) {
    const pkgDir = join(dir, "node_modules", name);
    mkdirSync(pkgDir, { recursive: true });
    for (const [file, text] of Object.entries(files)) writeFileSync(join(pkgDir, file), text);
  }
  return join(dir, "index.js");
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("createIsolatedVmFactory", () => {
  it("creates real isolated-vm isolates with the requested limit", () => {
    const isolate = createIsolatedVmFactory().createIsolate({ memoryLimit: 16 });
    try {
      const context = isolate.createContextSync();
      expect(isolate.compileScriptSync("6 * 7").runSync(context)).toBe(42);
      expect(isolate.getHeapStatisticsSync().heap_size_limit).toBeGreaterThanOrEqual(16 * 1024 * 1024);
    } finally {
      isolate.dispose();
    }
    expect(isolate.isDisposed).toBe(true);
  });

  it("refuses an isolated-vm major it does not drive", () => {
    const from = project({ "isolated-vm": { "package.json": '{"name":"isolated-vm","version":"4.7.2"}' } });
    expect(() => createIsolatedVmFactory({ resolveFrom: from }).createIsolate({ memoryLimit: 8 })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.ENGINE_UNAVAILABLE,
        message: expect.stringContaining(
          "isolated-vm 4.7.2 is installed, and this package drives 5.x, 6.x and 7.x only.",
        ),
      }),
    );
  });

  it("reports a native addon that does not load, with the rebuild command", () => {
    const from = project({
      "isolated-vm": {
        "package.json": '{"name":"isolated-vm","version":"5.0.4","main":"index.js"}',
        "index.js": "throw new Error('isolated_vm.node: wrong ELF class')",
      },
    });
    expect(() => createIsolatedVmFactory({ resolveFrom: from }).createIsolate({ memoryLimit: 8 })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.ENGINE_UNAVAILABLE,
        message: expect.stringMatching(
          /isolated-vm 5\.0\.4 is installed but did not load \(isolated_vm\.node: wrong ELF class\)\. Rebuild it .*`npm rebuild isolated-vm`/,
        ),
      }),
    );
  });
});
