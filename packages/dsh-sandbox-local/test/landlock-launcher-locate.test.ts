// Which launcher a host uses: the packaged prebuilt when it can run here, else
// one compiled from the shipped C source on first use into a private per-user
// cache — never a chmod of, or a write into, the installed package.
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLandlockBackend } from "../src/landlock/index.js";
import {
  launcherSourcePath,
  locateLandlockLauncher,
  packagedLauncherProblem,
  readElfFacts,
} from "../src/landlock/launcher-locate.js";
import { buildLauncherInto } from "./landlock-harness.js";

const work = mkdtempSync(join(tmpdir(), "landlock-locate-"));
let built = "";
/** The CPU a foreign prebuilt claims: any other than this one. */
const OTHER = process.arch === "arm64" ? { arch: "x64", machine: 62 } : { arch: "arm64", machine: 183 };

beforeAll(() => {
  built = buildLauncherInto(work);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A copy of the real launcher whose ELF header says it was built for `machine`. */
function foreignPrebuilt(name: string, machine: number): string {
  const bytes = readFileSync(built);
  bytes.writeUInt16LE(machine, 18);
  const path = join(work, name);
  writeFileSync(path, bytes, { mode: 0o755 });
  return path;
}

/** An empty cache root for one test, as `$XDG_CACHE_HOME`. */
function cacheRoot(name: string): string {
  const dir = join(work, `cache-${name}`);
  mkdirSync(dir);
  return dir;
}

describe("locating the Landlock launcher", () => {
  it("reads the CPU and the loader from the launcher's ELF header", () => {
    expect.assertions(2);
    expect(readElfFacts(built)).toEqual({
      arch: process.arch,
      interpreter: expect.stringMatching(/^\/.+ld.+\.so/),
    });
    expect(readElfFacts(launcherSourcePath())).toBeUndefined();
  });

  it("uses the packaged launcher when it is executable and built for this CPU", () => {
    expect.assertions(2);
    expect(packagedLauncherProblem(built)).toBeUndefined();
    expect(
      locateLandlockLauncher({ packagedPath: built, env: { XDG_CACHE_HOME: cacheRoot("same-cpu") } }),
    ).toBe(built);
  });

  it("names why a packaged launcher cannot run here", () => {
    expect.assertions(4);
    const foreign = foreignPrebuilt("foreign-cpu", OTHER.machine);
    expect(packagedLauncherProblem(foreign)).toBe(
      `the packaged launcher is built for ${OTHER.arch} and this CPU is ${process.arch}`,
    );
    const modeless = join(work, "modeless");
    copyFileSync(built, modeless);
    chmodSync(modeless, 0o644);
    expect(packagedLauncherProblem(modeless)).toBe(
      "the packaged launcher is not executable (it was installed without its mode bit)",
    );
    const loader = readElfFacts(built)?.interpreter ?? "";
    const otherLibc = join(work, "other-libc");
    const bytes = readFileSync(built);
    const at = bytes.indexOf(loader, 0, "latin1");
    bytes.write("/no/such/ld.so".padEnd(loader.length, "\0"), at, "latin1");
    writeFileSync(otherLibc, bytes, { mode: 0o755 });
    expect(packagedLauncherProblem(otherLibc)).toBe(
      "the packaged launcher needs the loader /no/such/ld.so, which this system lacks (another C library?)",
    );
    expect(packagedLauncherProblem(join(work, "absent"))).toBe("the package has no prebuilt launcher");
  });

  it("builds the launcher from source on first use into a private user cache when the prebuilt is for another CPU", () => {
    expect.assertions(6);
    const foreign = foreignPrebuilt("foreign-for-build", OTHER.machine);
    const before = readFileSync(foreign);
    const root = cacheRoot("build");
    const path = locateLandlockLauncher({
      packagedPath: foreign,
      env: { ...process.env, XDG_CACHE_HOME: root },
    });
    expect(path).toMatch(
      new RegExp(`^${root}/suaveplan-sandbox/landlock-launcher-linux-${process.arch}-[0-9a-f]{16}$`),
    );
    expect(createLandlockBackend({ launcherPath: path }).probe()).toEqual(
      createLandlockBackend({ launcherPath: built }).probe(),
    );
    expect(statSync(path).mode & 0o777).toBe(0o755);
    expect(statSync(join(root, "suaveplan-sandbox")).mode & 0o777).toBe(0o700);
    expect(readFileSync(foreign).equals(before)).toBe(true);
    expect(statSync(foreign).mode & 0o777).toBe(0o755);
  });

  it("builds instead of chmod-ing a packaged launcher that arrived without its exec bit", () => {
    expect.assertions(3);
    const modeless = join(work, "modeless-packaged");
    copyFileSync(built, modeless);
    chmodSync(modeless, 0o644);
    const path = locateLandlockLauncher({
      packagedPath: modeless,
      env: { ...process.env, XDG_CACHE_HOME: cacheRoot("modeless") },
    });
    expect(path).not.toBe(modeless);
    expect(createLandlockBackend({ launcherPath: path }).probe().available).toBe(true);
    expect(statSync(modeless).mode & 0o777).toBe(0o644);
  });

  it("reports the backend unavailable, with the reason, when no compiler can build it", () => {
    expect.assertions(1);
    const root = cacheRoot("no-cc");
    const path = locateLandlockLauncher({
      packagedPath: foreignPrebuilt("foreign-no-cc", OTHER.machine),
      env: { ...process.env, XDG_CACHE_HOME: root, CC: "suaveplan-no-such-cc" },
    });
    expect(createLandlockBackend({ launcherPath: path }).probe()).toEqual({
      backend: "landlock",
      available: false,
      reason: `Landlock launcher: the packaged launcher is built for ${OTHER.arch} and this CPU is ${process.arch}, and building it from source into ${root}/suaveplan-sandbox failed: suaveplan-no-such-cc: C compiler not found (set CC or install cc)`,
    });
  });

  it("refuses a cache directory other users can write to", () => {
    expect.assertions(1);
    const root = cacheRoot("shared");
    mkdirSync(join(root, "suaveplan-sandbox"));
    chmodSync(join(root, "suaveplan-sandbox"), 0o777);
    const path = locateLandlockLauncher({
      packagedPath: foreignPrebuilt("foreign-shared", OTHER.machine),
      env: { ...process.env, XDG_CACHE_HOME: root },
    });
    expect(createLandlockBackend({ launcherPath: path }).probe()).toEqual({
      backend: "landlock",
      available: false,
      reason: `Landlock launcher: the packaged launcher is built for ${OTHER.arch} and this CPU is ${process.arch}, and building it from source into ${root}/suaveplan-sandbox failed: the directory is not private (it must be a directory owned by this user and writable only by it)`,
    });
  });
});
