import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const packagesDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const work = mkdtempSync(join(tmpdir(), "suaveplan-consumer-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function pack(packageName: string): string {
  execFileSync("pnpm", ["pack", "--pack-destination", work], {
    cwd: join(packagesDir, packageName),
    stdio: "ignore",
  });
  const tarball = readdirSync(work).find(
    (f) => f.startsWith(`suaveplan-${packageName}-`) && f.endsWith(".tgz"),
  );
  if (!tarball) throw new Error(`pnpm pack produced no tarball for ${packageName}`);
  return `file:./${tarball}`;
}

describe("a project that installs only sandbox-core + sandbox-kernel + sandbox-guest (+ sandbox-typescript) + sandbox-vm", () => {
  it("runs an execution from the packed tarballs without the other engines", () => {
    const core = pack("sandbox-core");
    const kernel = pack("sandbox-kernel");
    const guest = pack("sandbox-guest");
    const typescript = pack("sandbox-typescript");
    const vmEngine = pack("sandbox-vm");
    writeFileSync(
      join(work, "package.json"),
      JSON.stringify({
        name: "consumer",
        private: true,
        type: "module",
        dependencies: {
          "@suaveplan/sandbox-core": core,
          "@suaveplan/sandbox-kernel": kernel,
          "@suaveplan/sandbox-guest": guest,
          "@suaveplan/sandbox-typescript": typescript,
          "@suaveplan/sandbox-vm": vmEngine,
          "@opentelemetry/api": "1.9.0",
        },
        overrides: {
          "@suaveplan/sandbox-core": core,
          "@suaveplan/sandbox-kernel": kernel,
          "@suaveplan/sandbox-guest": guest,
          "@suaveplan/sandbox-typescript": typescript,
        },
      }),
    );
    writeFileSync(
      join(work, "main.mjs"),
      [
        'import { VmEngine } from "@suaveplan/sandbox-vm";',
        'import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";',
        "const engine = new VmEngine({ timeout: 1000 });",
        "const ok = await engine.execute(\"console.log('hi'); 2 + 3\");",
        'const slow = await engine.execute("while (true) {}", {}, { timeout: 50 });',
        'const ts = await engine.execute("const n: number = 41;\\nn + 1", {}, { language: "typescript" });',
        "await engine.destroy();",
        "process.stdout.write(JSON.stringify({ result: ok.result, logs: ok.logs, timeout: slow.errorCode === SANDBOX_CODES.TIMEOUT, ts: ts.result }));",
      ].join("\n"),
    );
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
      cwd: work,
      stdio: "ignore",
    });
    const output = execFileSync(process.execPath, ["main.mjs"], { cwd: work, encoding: "utf8" });
    expect(JSON.parse(output)).toEqual({
      result: 5,
      logs: [{ level: "log", message: "hi" }],
      timeout: true,
      ts: 42,
    });
    for (const other of ["sandbox-worker", "sandbox-spawn", "sandbox-isolate", "sandbox"]) {
      expect(existsSync(join(work, "node_modules", "@suaveplan", other)), other).toBe(false);
    }
  }, 180_000);
});
