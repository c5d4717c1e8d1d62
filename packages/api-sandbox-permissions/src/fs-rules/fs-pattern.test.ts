import { describe, expect, it } from "vitest";
import { compileFsRule, fsPatternProblem, matchesFsRule } from "./fs-pattern.js";

// "/" exists everywhere and has no symlinked prefix in these patterns below /nonexistent-*.
const base = "/nonexistent-perm-test";
const matches = (pattern: string, path: string) => matchesFsRule(compileFsRule(pattern, "read", "/"), path);

describe("fs pattern syntax", () => {
  it("a pattern without globs matches exactly that path", () => {
    expect([
      matches(`${base}/a`, `${base}/a`),
      matches(`${base}/a`, `${base}/a/b`),
      matches(`${base}/a`, `${base}/ab`),
    ]).toEqual([true, false, false]);
  });

  it("`dir/**` matches the directory itself and everything below it", () => {
    const p = `${base}/dir/**`;
    expect([
      matches(p, `${base}/dir`),
      matches(p, `${base}/dir/a`),
      matches(p, `${base}/dir/a/b/c.txt`),
      matches(p, `${base}/dirx/a`),
      matches(p, `${base}`),
    ]).toEqual([true, true, true, false, false]);
  });

  it("`*` matches within one segment only, dot-files included", () => {
    const p = `${base}/dir/*.txt`;
    expect([
      matches(p, `${base}/dir/a.txt`),
      matches(p, `${base}/dir/.txt`),
      matches(p, `${base}/dir/sub/a.txt`),
      matches(p, `${base}/dir/a.txt.bak`),
    ]).toEqual([true, true, false, false]);
  });

  it("`**` in the middle matches zero or more segments", () => {
    const p = `${base}/a/**/z`;
    expect([matches(p, `${base}/a/z`), matches(p, `${base}/a/b/c/z`), matches(p, `${base}/a/b/c/y`)]).toEqual(
      [true, true, false],
    );
  });

  it("other glob characters are literal", () => {
    expect([
      matches(`${base}/[ab]?.txt`, `${base}/[ab]?.txt`),
      matches(`${base}/[ab]?.txt`, `${base}/a1.txt`),
    ]).toEqual([true, false]);
  });

  it("relative patterns resolve against cwd and `..` before a glob is applied", () => {
    expect(compileFsRule("x/../y/**", "write", base)).toMatchObject({ base: `${base}/y`, access: "write" });
  });

  it("names what is wrong with a malformed pattern", () => {
    expect([
      fsPatternProblem("a/b**/c"),
      fsPatternProblem("a/*/../b"),
      fsPatternProblem("a\0"),
      fsPatternProblem("a/**/b"),
    ]).toEqual([
      "`**` must be a whole path segment",
      "`.` and `..` are not allowed after a glob segment",
      "must not contain a NUL byte",
      undefined,
    ]);
  });
});
