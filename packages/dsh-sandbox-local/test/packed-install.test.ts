// The package as a stranger receives it: packed with pnpm, installed with npm
// into an empty project outside the repository, then used from a read-only
// mount (bwrap --ro-bind), where a run-time chmod or build into node_modules
// would fail. The launcher must arrive executable and work as shipped.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLandlockBackend } from "../src/landlock/index.js";
import { PACKAGE_DIR } from "./landlock-harness.js";

const work = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-dsh-consumer-")));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function pack(dir: string): string {
  execFileSync("pnpm", ["pack", "--pack-destination", work], {
    cwd: join(PACKAGE_DIR, "..", dir),
    stdio: "ignore",
  });
  const tarball = readdirSync(work).find((f) => f.startsWith(`suaveplan-${dir}-`) && f.endsWith(".tgz"));
  if (tarball === undefined) throw new Error(`pnpm pack produced no tarball for ${dir}`);
  return tarball;
}

describe("dsh-sandbox-local installed from its tarball", () => {
  it("ships the launcher executable, with its C source and LICENSE, and probes from a read-only install", () => {
    expect.assertions(4);
    const core = pack("sandbox-core");
    const contract = pack("dsh-sandbox");
    const local = pack("dsh-sandbox-local");
    const listing = execFileSync("tar", ["tvzf", join(work, local)], { encoding: "utf8" })
      .split("\n")
      .filter((line) => /package\/(dist\/landlock-launcher|native\/landlock-launcher\.c|LICENSE)$/.test(line))
      .map((line) => `${line.split(/\s+/)[0]} ${line.split(/\s+/).at(-1)}`)
      .sort();
    expect(listing).toEqual([
      "-rw-r--r-- package/LICENSE",
      "-rw-r--r-- package/native/landlock-launcher.c",
      "-rwxr-xr-x package/dist/landlock-launcher",
    ]);

    const deps = {
      "@suaveplan/sandbox-core": `file:./${core}`,
      "@suaveplan/dsh-sandbox": `file:./${contract}`,
      "@suaveplan/dsh-sandbox-local": `file:./${local}`,
    };
    writeFileSync(
      join(work, "package.json"),
      JSON.stringify({
        name: "consumer",
        private: true,
        type: "module",
        dependencies: { ...deps, "@opentelemetry/api": "1.9.0" },
        overrides: deps,
      }),
    );
    writeFileSync(
      join(work, "main.mjs"),
      [
        'import { accessSync, constants } from "node:fs";',
        'import { createLandlockBackend, landlockLauncherPath } from "@suaveplan/dsh-sandbox-local";',
        "let writable = true;",
        'try { accessSync(new URL("./node_modules/@suaveplan/dsh-sandbox-local/dist/", import.meta.url), constants.W_OK); } catch (e) { writable = e.code; }',
        "process.stdout.write(JSON.stringify({ path: landlockLauncherPath(), writable, probe: createLandlockBackend().probe() }));",
      ].join("\n"),
    );
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
      cwd: work,
      stdio: "ignore",
    });
    const installed = join(
      work,
      "node_modules",
      "@suaveplan",
      "dsh-sandbox-local",
      "dist",
      "landlock-launcher",
    );
    expect(statSync(installed).mode & 0o777).toBe(0o755);

    const output = execFileSync(
      "bwrap",
      [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--chdir",
        work,
        process.execPath,
        "main.mjs",
      ],
      { encoding: "utf8", env: { ...process.env, XDG_CACHE_HOME: join(work, "no-cache") } },
    );
    expect(JSON.parse(output)).toEqual({
      path: installed,
      writable: "EROFS",
      probe: JSON.parse(JSON.stringify(createLandlockBackend({ launcherPath: installed }).probe())),
    });
    expect(readdirSync(work)).not.toContain("no-cache");
  }, 180_000);
});
