import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CanonicalisationError, canonicalisePath, canonicalisePathSync } from "./canonicalise-path.js";

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "perm-canon-")));
  mkdirSync(join(root, "allowed/sub"), { recursive: true });
  mkdirSync(join(root, "outside/deep"), { recursive: true });
  writeFileSync(join(root, "secret"), "s");
  symlinkSync(join(root, "outside/deep"), join(root, "allowed/link"));
  symlinkSync("loop-b", join(root, "loop-a"));
  symlinkSync("loop-a", join(root, "loop-b"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("canonicalisePath", () => {
  it("collapses `..` lexically when no symlink is involved", async () => {
    expect(await canonicalisePath("allowed/../secret", root)).toBe(join(root, "secret"));
  });

  it("resolves a symlink before applying the `..` after it, as the kernel does", async () => {
    // allowed/link -> outside/deep, so allowed/link/.. is outside, not allowed/
    expect(await canonicalisePath("allowed/link/../x", root)).toBe(join(root, "outside/x"));
  });

  it("resolves the nearest existing ancestor of a path that does not exist yet", async () => {
    expect(await canonicalisePath(join(root, "allowed/link/new/file.txt"), "/")).toBe(
      join(root, "outside/deep/new/file.txt"),
    );
  });

  it("resumes resolving after a missing component is climbed out of with `..`", async () => {
    expect(await canonicalisePath("allowed/missing/../link/f", root)).toBe(join(root, "outside/deep/f"));
  });

  it("fails with the errno for a symlink loop", async () => {
    await expect(canonicalisePath("loop-a/x", root)).rejects.toMatchObject({ errno: "ELOOP" });
    expect(() => canonicalisePathSync("loop-a/x", root)).toThrow(CanonicalisationError);
  });

  it("refuses NUL bytes", async () => {
    await expect(canonicalisePath("allowed/\0x", root)).rejects.toMatchObject({ errno: "EINVAL" });
  });

  it("gives the same answers synchronously", () => {
    expect(canonicalisePathSync("allowed/link/../x", root)).toBe(join(root, "outside/x"));
    expect(canonicalisePathSync("./allowed//sub/./", root)).toBe(join(root, "allowed/sub"));
  });
});
