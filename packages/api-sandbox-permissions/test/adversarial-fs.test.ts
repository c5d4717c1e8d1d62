// Adversarial review through the public API: path and URL tricks an attacker of a plugin host
// would try. Real temp directories and real HTTP servers on 127.0.0.1; nothing is mocked.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PermissionChecker } from "../src/index.js";

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "perm-adversarial-")));
  mkdirSync(join(root, "allowed/sub"), { recursive: true });
  mkdirSync(join(root, "allowed-evil"));
  mkdirSync(join(root, "outside"));
  writeFileSync(join(root, "allowed/a.txt"), "a");
  writeFileSync(join(root, "allowed-evil/x.txt"), "x");
  writeFileSync(join(root, "secret"), "s");
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const checker = (policy: unknown) => new PermissionChecker(policy, { cwd: root });
const readAllowed = () => checker({ fs: [{ path: "allowed/**", access: "read" }] });
const writeAllowed = () => checker({ fs: [{ path: "allowed/**", access: "write" }] });

async function verdict(c: PermissionChecker, path: unknown, access: "read" | "write" = "read") {
  const decision = await c.checkFs(path as string, access);
  return decision.allowed ? `allowed ${decision.canonicalPath.slice(root.length)}` : decision.reason;
}

describe("fs path tricks", () => {
  it("spelling variants of an allowed file resolve to the same canonical path", async () => {
    const c = readAllowed();
    for (const spelling of [
      "allowed/a.txt",
      "allowed//a.txt",
      "./allowed/./a.txt",
      "allowed/sub/../a.txt",
      `${root}/allowed/a.txt`,
      `${root}//allowed///a.txt`,
    ]) {
      expect(await verdict(c, spelling), spelling).toBe("allowed /allowed/a.txt");
    }
    expect(await verdict(c, "allowed/")).toBe("allowed /allowed");
  });

  it("dot-dot, prefix-sibling, case and absolute escapes are denied", async () => {
    const c = readAllowed();
    for (const attempt of [
      "allowed/../secret",
      "allowed/sub/../../secret",
      "allowed/../allowed-evil/x.txt",
      "allowed-evil/x.txt",
      `${root}/allowed-evil/x.txt`,
      "ALLOWED/a.txt",
      "/etc/passwd",
      "allowed/../../../../../../etc/passwd",
      "file:///etc/passwd",
    ]) {
      expect(await verdict(c, attempt), attempt).not.toMatch(/^allowed \/allowed(\/|$)/u);
    }
    // A file: URL string is an ordinary relative path (a folder named "file:"), never a URL.
    expect(await verdict(c, "file:///etc/passwd")).toBe("no-matching-rule");
  });

  it("NUL bytes, empty strings, and Buffer/URL objects are invalid paths", async () => {
    const c = readAllowed();
    for (const bad of [
      "allowed/a.txt\0.png",
      "",
      Buffer.from("allowed/a.txt"),
      new URL(`file://${root}/allowed/a.txt`),
    ]) {
      expect(await verdict(c, bad)).toBe("invalid-path");
    }
  });

  it("a very long path of missing components is decided in linear time (no realpath per component below a missing one)", async () => {
    const c = readAllowed();
    const started = Date.now();
    const deep = await c.checkFs(`allowed/${"x/".repeat(50_000)}y`, "read");
    expect(deep.canonicalPath).toBe(join(root, "allowed", `${"x/".repeat(50_000)}y`));
    expect(await verdict(c, `allowed/${"./".repeat(200_000)}a.txt`)).toBe("allowed /allowed/a.txt");
    expect(await verdict(c, `allowed/${"x/".repeat(50_000)}${"../".repeat(50_001)}secret`)).toBe(
      "no-matching-rule",
    );
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("a pattern with many `**` against a very long path is matched without backtracking blow-up", async () => {
    const c = checker({ fs: [{ path: "allowed/**/a/**/b/**/c/**/d/**/never", access: "read" }] });
    const started = Date.now();
    expect(await verdict(c, `allowed/${"a/b/c/d/".repeat(3_000)}x`)).toBe("no-matching-rule");
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("symlink loops are denied as unresolvable", async () => {
    symlinkSync(join(root, "allowed/loop-b"), join(root, "allowed/loop-a"));
    symlinkSync(join(root, "allowed/loop-a"), join(root, "allowed/loop-b"));
    expect(await verdict(readAllowed(), "allowed/loop-a")).toBe("unresolvable-path");
    expect(await verdict(readAllowed(), "allowed/loop-a/x")).toBe("unresolvable-path");
  });

  it("a dangling symlink inside an allowed root is judged by where a write through it would land", async () => {
    // open("allowed/dangling", O_CREAT) follows the link and creates outside/new.txt.
    symlinkSync(join(root, "outside/new.txt"), join(root, "allowed/dangling"));
    const decision = await writeAllowed().checkFs("allowed/dangling", "write");
    expect(decision.allowed).toBe(false);
    expect(decision.canonicalPath).toBe(join(root, "outside/new.txt"));
  });

  it("a dangling relative symlink to a missing directory outside is denied for paths below it", async () => {
    symlinkSync("../outside/missing-dir", join(root, "allowed/dir-link"));
    const decision = await writeAllowed().checkFs("allowed/dir-link/new.txt", "write");
    expect(decision.allowed).toBe(false);
    expect(decision.canonicalPath).toBe(join(root, "outside/missing-dir/new.txt"));
  });

  it("a dangling symlink that stays inside the allowed root is still allowed", async () => {
    symlinkSync("sub/later.txt", join(root, "allowed/inside-link"));
    expect(await verdict(writeAllowed(), "allowed/inside-link", "write")).toBe(
      "allowed /allowed/sub/later.txt",
    );
  });

  it("a dangling symlink chain that loops is denied as unresolvable", async () => {
    symlinkSync("missing/../d2", join(root, "allowed/d1"));
    symlinkSync("d1/x", join(root, "allowed/d2"));
    expect(await verdict(writeAllowed(), "allowed/d1", "write")).toBe("unresolvable-path");
  });
});
