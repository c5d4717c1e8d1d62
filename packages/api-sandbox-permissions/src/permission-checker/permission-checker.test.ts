import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestMetrics } from "../../test/support/metric-reader.js";
import { PERMISSION_DENIED_METRIC } from "../internal/telemetry.js";
import { PermissionChecker, permissionDeniedError } from "./permission-checker.js";

let root: string;
let metrics: ReturnType<typeof createTestMetrics>;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "perm-checker-")));
  mkdirSync(join(root, "allowed/sub"), { recursive: true });
  mkdirSync(join(root, "outside"));
  writeFileSync(join(root, "allowed/a.txt"), "a");
  writeFileSync(join(root, "secret"), "s");
  symlinkSync(join(root, "outside"), join(root, "allowed/escape"));
  symlinkSync(join(root, "secret"), join(root, "allowed/secret-link"));
  metrics = createTestMetrics();
});
afterEach(async () => {
  rmSync(root, { recursive: true, force: true });
  await metrics.shutdown();
});

function checker(policy: unknown): PermissionChecker {
  return new PermissionChecker(policy, { cwd: root, meterProvider: metrics.meterProvider });
}

describe("PermissionChecker fs", () => {
  it("allows a path under an allowed root and returns its canonical form", async () => {
    const decision = await checker({ fs: [{ path: "allowed/**", access: "read" }] }).checkFs(
      "allowed/sub/../a.txt",
      "read",
    );
    expect(decision).toEqual({
      allowed: true,
      capability: "fs",
      access: "read",
      path: "allowed/sub/../a.txt",
      canonicalPath: join(root, "allowed/a.txt"),
      rule: "allowed/**",
    });
  });

  it("denies `allowed/../secret` without throwing", async () => {
    const decision = await checker({ fs: [{ path: "allowed/**", access: "read" }] }).checkFs(
      "allowed/../secret",
      "read",
    );
    expect(decision).toEqual({
      allowed: false,
      capability: "fs",
      access: "read",
      path: "allowed/../secret",
      canonicalPath: join(root, "secret"),
      reason: "no-matching-rule",
      message: `fs read of "allowed/../secret" denied: it resolves to "${join(root, "secret")}", which no policy.fs rule grants for read`,
    });
  });

  it("denies symlinks inside an allowed root that point outside it", async () => {
    const c = checker({
      fs: [
        { path: "allowed/**", access: "write" },
        { path: "allowed/**", access: "read" },
      ],
    });
    const results = await Promise.all([
      c.checkFs("allowed/secret-link", "read"),
      c.checkFs("allowed/escape/new-file", "write"),
      c.checkFs(`${root}/allowed/escape/../secret`, "read"),
    ]);
    expect(results.map((d) => [d.allowed, d.canonicalPath])).toEqual([
      [false, join(root, "secret")],
      [false, join(root, "outside/new-file")],
      [false, join(root, "secret")],
    ]);
  });

  it("write does not imply read, and read does not imply write", async () => {
    const c = checker({
      fs: [
        { path: "allowed/**", access: "write" },
        { path: "outside/**", access: "read" },
      ],
    });
    const results = await Promise.all([
      c.checkFs("allowed/a.txt", "write"),
      c.checkFs("allowed/a.txt", "read"),
      c.checkFs("outside/x", "read"),
      c.checkFs("outside/x", "write"),
    ]);
    expect(results.map((d) => d.allowed)).toEqual([true, false, true, false]);
  });

  it("denies invalid paths instead of throwing", async () => {
    const c = checker({ fs: [{ path: "/**", access: "read" }] });
    const results = await Promise.all([
      c.checkFs("", "read"),
      c.checkFs("a\0b", "read"),
      c.checkFs(42 as never, "read"),
    ]);
    expect(results.map((d) => (d.allowed ? "allowed" : d.reason))).toEqual([
      "invalid-path",
      "invalid-path",
      "invalid-path",
    ]);
  });
});

describe("PermissionChecker fetch", () => {
  it("allows a granted origin and denies the userinfo trick", () => {
    const c = checker({ fetch: ["allowed.example"] });
    expect(c.checkFetch("https://allowed.example/x")).toEqual({
      allowed: true,
      capability: "fetch",
      url: "https://allowed.example/x",
      rule: "allowed.example",
    });
    expect(c.checkFetch("https://allowed.example@evil.example/")).toEqual({
      allowed: false,
      capability: "fetch",
      url: "https://allowed.example@evil.example/",
      reason: "userinfo",
      message:
        'fetch of "https://allowed.example@evil.example/" denied: URLs with credentials (user:pass@) are refused',
    });
  });

  it("check() dispatches on capability", async () => {
    const c = checker({ fetch: ["http://127.0.0.1:*"] });
    expect(await c.check({ capability: "fetch", url: new URL("http://127.0.0.1:9/") })).toMatchObject({
      allowed: true,
    });
    expect(await c.check({ capability: "fs", path: "allowed/a.txt", access: "read" })).toMatchObject({
      allowed: false,
    });
  });
});

describe("PermissionChecker tools", () => {
  it("grants only the exact tool names in policy.tools", async () => {
    const c = checker({ tools: ["getWeather"] });
    expect(c.checkTool("getWeather")).toEqual({
      allowed: true,
      capability: "tool",
      tool: "getWeather",
      rule: "getWeather",
    });
    expect(await c.check({ capability: "tool", tool: "getweather" })).toEqual({
      allowed: false,
      capability: "tool",
      tool: "getweather",
      reason: "no-matching-rule",
      message: 'tool call "getweather" denied: no policy.tools entry grants it',
    });
    expect(checker({}).checkTool("getWeather").allowed).toBe(false);
    expect(await metrics.read(PERMISSION_DENIED_METRIC, "capability")).toEqual({ tool: 2 });
  });
});

describe("denial metric", () => {
  it("every denial increments plugin.permission_denied_total{capability}", async () => {
    const c = checker({ fs: [{ path: "allowed/**", access: "read" }], fetch: ["allowed.example"] });
    await c.checkFs("allowed/a.txt", "read");
    c.checkFetch("https://allowed.example/");
    await c.checkFs("secret", "read");
    await c.checkFs("allowed/a.txt", "write");
    c.checkFetch("https://evil.example/");
    expect(await metrics.read(PERMISSION_DENIED_METRIC, "capability")).toEqual({ fs: 2, fetch: 1 });
  });

  it("permissionDeniedError turns a denial into a coded error", async () => {
    const decision = checker({}).checkFetch("https://evil.example/");
    if (decision.allowed) throw new Error("expected a denial");
    expect(permissionDeniedError(decision).toJSON()).toEqual({
      name: "PermissionError",
      code: "PERMISSION_DENIED",
      message:
        'fetch of "https://evil.example/" denied: no policy.fetch pattern grants https://evil.example:443 (PERMISSION_DENIED); see @suaveplan/api-sandbox-permissions/docs/errors/PERMISSION_DENIED.md',
      details: { capability: "fetch", reason: "no-matching-rule" },
    });
  });
});
