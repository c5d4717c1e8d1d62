// The landlock+bwrap backend: protected sub-paths of a writable workspace stay
// read-only (bwrap ro re-binds) while the rest is writable (Landlock + bwrap).
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SandboxUnavailableError } from "@suaveplan/dsh-sandbox";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { BackendProbeResult, LocalBackend, LocalConfinePolicy } from "../src/backend/index.js";
import { createLayeredBackend, LAYERED_RUNNER_FAILURE_RULES } from "../src/landlock/index.js";
import {
  buildLauncherInto,
  createFixture,
  type Fixture,
  kernelAbi,
  matchesDenial,
  policyFor,
  run,
  runConfined,
  runnerFailureLine,
} from "./landlock-harness.js";

const buildDir = mkdtempSync(join(tmpdir(), "landlock-launcher-"));
let launcherPath = "";
let backend: LocalBackend;
let probe: BackendProbeResult;

beforeAll(() => {
  launcherPath = buildLauncherInto(buildDir);
  backend = createLayeredBackend({ launcherPath });
  probe = backend.probe();
});
afterAll(() => rmSync(buildDir, { recursive: true, force: true }));

describe("landlock+bwrap", () => {
  let fx: Fixture;
  let hooks: string;
  let objects: string;
  let policy: LocalConfinePolicy;
  const HOOK = "#!/bin/sh\nexit 0\n";

  beforeEach(() => {
    fx = createFixture();
    hooks = join(fx.workspace, ".git", "hooks");
    objects = join(fx.workspace, ".git", "objects");
    mkdirSync(hooks, { recursive: true });
    mkdirSync(objects, { recursive: true });
    writeFileSync(join(hooks, "pre-commit"), HOOK);
    policy = policyFor(fx, { protectedPaths: [hooks] });
  });
  afterEach(() => fx.dispose());

  it("probes available with full enforcement, network deny and its facts", () => {
    expect.assertions(1);
    expect(probe).toEqual({
      backend: "landlock+bwrap",
      available: true,
      enforcement: "full",
      facts: { landlockAbi: kernelAbi(launcherPath), bwrapVersion: expect.stringMatching(/^\d+\.\d+/) },
      networkDeny: true,
      denyRead: true,
      pty: true,
      domainAllowList: "full",
    });
  });

  it("protected .git/hooks stays read-only while .git/objects is writable", async () => {
    expect.assertions(5);
    const result = await runConfined(
      backend,
      probe,
      policy,
      'echo blob > .git/objects/ab; echo "rm -rf ~" > .git/hooks/pre-commit; echo x > .git/hooks/post-checkout; exit 0',
    );
    expect(result.code).toBe(0);
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expect(readFileSync(join(objects, "ab"), "utf8")).toBe("blob\n");
    expect(readFileSync(join(hooks, "pre-commit"), "utf8")).toBe(HOOK);
    expect(readdirSync(hooks)).toEqual(["pre-commit"]);
  });

  it("attack: remove, rename or replace the protected directory", async () => {
    expect.assertions(2);
    await runConfined(
      backend,
      probe,
      policy,
      "rm -rf .git/hooks; mv .git/hooks .git/hooks-old; mkdir -p .git/evil && mv -T .git/evil .git/hooks; rm -f .git/hooks/pre-commit; exit 0",
    );
    expect(readFileSync(join(hooks, "pre-commit"), "utf8")).toBe(HOOK);
    expect(readdirSync(join(fx.workspace, ".git")).sort()).toEqual(["evil", "hooks", "objects"]);
  });

  it("wrap pins the protected path's parents, puts the ro re-bind after the writable binds, and runs Landlock inside bwrap", () => {
    expect.assertions(1);
    const confined = backend.wrap(["true"], { ...policy, network: "deny" }, probe);
    const abi = String(kernelAbi(launcherPath));
    expect(confined).toEqual({
      argv: [
        expect.stringMatching(/\/bwrap$/),
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-net",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--remount-ro",
        "/dev",
        "--bind",
        fx.workspace,
        fx.workspace,
        "--bind",
        fx.tempDir,
        fx.tempDir,
        "--bind",
        join(fx.workspace, ".git"),
        join(fx.workspace, ".git"),
        "--ro-bind",
        hooks,
        hooks,
        "--",
        launcherPath,
        "--min-abi",
        abi,
        "--rw",
        fx.workspace,
        "--rw",
        fx.tempDir,
        "--deny-net",
        "--setenv",
        "TMPDIR",
        fx.tempDir,
        "--",
        "true",
      ],
      enforcement: "full",
      denialSignatures: ["Permission denied", "Invalid cross-device link", "Read-only file system"],
      runnerFailureRules: [
        { allowedExitCodes: [121], fatalSignatures: ["landlock-launcher:"] },
        { allowedExitCodes: [1], fatalSignatures: ["bwrap: "] },
      ],
      env: { TMPDIR: fx.tempDir },
      network: "deny",
      backend: "landlock+bwrap",
    });
  });

  it("refuses a protected path that does not exist (the command could create it)", () => {
    expect.assertions(1);
    const missing = policyFor(fx, { protectedPaths: [join(fx.workspace, ".hg", "hgrc")] });
    expect(() => backend.wrap(["true"], missing, probe)).toThrow(SandboxUnavailableError);
  });

  it("refuses a protected path that is a symbolic link", () => {
    expect.assertions(1);
    const link = join(fx.workspace, "hooks-link");
    symlinkSync(hooks, link);
    expect(() => backend.wrap(["true"], policyFor(fx, { protectedPaths: [link] }), probe)).toThrow(
      "The landlock+bwrap backend cannot keep an entry of policy.protectedPaths read-only: it is a symbolic link, not a canonical path. Create it before confining, or drop it from protectedPaths (SANDBOX_UNAVAILABLE)",
    );
  });

  it("a bwrap setup failure matches the bwrap runner-failure rule", async () => {
    expect.assertions(2);
    const confined = backend.wrap(["true"], policy, probe);
    // A protected path deleted between wrap and spawn: bwrap cannot bind it and refuses to run.
    rmSync(hooks, { recursive: true });
    const result = await run(confined.argv, { cwd: fx.workspace });
    expect(result.code).toBe(1);
    expect(runnerFailureLine(LAYERED_RUNNER_FAILURE_RULES, result.code, result.stderr)).toMatch(/^bwrap: /);
  });

  it("reports why when bwrap is missing", () => {
    expect.assertions(1);
    expect(createLayeredBackend({ launcherPath, bwrapPath: join(fx.root, "no-bwrap") }).probe()).toEqual({
      backend: "landlock+bwrap",
      available: false,
      reason: "the configured bwrapPath is not an executable file",
    });
  });
});
