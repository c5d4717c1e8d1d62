import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expandGlob, GlobBudgetExceeded, isGlob, segmentMatcher } from "./glob-paths.js";

describe("segmentMatcher", () => {
  it("matches *, ? and classes within one segment, and leading dots only literally", () => {
    const cases: [string, string, boolean][] = [
      ["*.env", "prod.env", true],
      ["*.env", ".env", false],
      [".env*", ".env.local", true],
      ["?.txt", "a.txt", true],
      ["?.txt", "ab.txt", false],
      ["[ab].md", "b.md", true],
      ["[!ab].md", "b.md", false],
      ["a.b", "axb", false],
    ];
    expect(cases.map(([glob, name]) => segmentMatcher(glob).test(name))).toEqual(cases.map((c) => c[2]));
  });
});

describe("expandGlob", () => {
  let root: string;
  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-glob-")));
    for (const dir of ["a/.git/hooks", "b/c/.git/hooks", "linked-target/.git/hooks"]) {
      mkdirSync(join(root, dir), { recursive: true });
    }
    writeFileSync(join(root, "a", ".env"), "");
    writeFileSync(join(root, "b", "c", ".env"), "");
    symlinkSync(join(root, "linked-target"), join(root, "link"));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("returns existing literal paths, and nothing for missing ones", () => {
    expect(expandGlob(join(root, "a", ".env"))).toEqual([join(root, "a", ".env")]);
    expect(expandGlob(join(root, "a", "missing"))).toEqual([]);
  });

  it("expands * and ** without descending into symbolic links", () => {
    expect(expandGlob(join(root, "*", ".env"))).toEqual([join(root, "a", ".env")]);
    expect(expandGlob(join(root, "**", ".git", "hooks"))).toEqual([
      join(root, "a", ".git", "hooks"),
      join(root, "b", "c", ".git", "hooks"),
      join(root, "linked-target", ".git", "hooks"),
    ]);
    expect(isGlob(join(root, "**", ".env"))).toBe(true);
  });

  it("gives up past its directory budget", () => {
    expect(() => expandGlob(join(root, "**", "x"), 2)).toThrow(GlobBudgetExceeded);
  });
});
