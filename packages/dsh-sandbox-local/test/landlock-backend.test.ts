// The landlock backend's probe, wrap and launcher contract against the real
// kernel and the real compiled launcher.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SandboxUnavailableError } from "@suaveplan/dsh-sandbox";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { BackendProbeResult } from "../src/backend/index.js";
import {
  createLandlockBackend,
  LANDLOCK_DENIAL_SIGNATURES,
  LANDLOCK_LAUNCHER_SETUP_FAILED_EXIT_CODE,
  LANDLOCK_RUNNER_FAILURE_RULES,
  landlockLauncherPath,
} from "../src/landlock/index.js";
import { landlockEnforcement, METADATA_GAP } from "../src/landlock/launcher-check.js";
import {
  buildLauncherInto,
  createFixture,
  type Fixture,
  kernelAbi,
  PACKAGE_DIR,
  policyFor,
  run,
  runnerFailureLine,
} from "./landlock-harness.js";

const buildDir = mkdtempSync(join(tmpdir(), "landlock-launcher-"));
let launcherPath = "";
let abi = 0;

let blocker = "";

/** A tiny real seccomp wrapper: makes landlock_create_ruleset fail with the named errno, then execs. */
const BLOCKER_C = `#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int err = strcmp(argv[1], "ENOSYS") == 0 ? ENOSYS : strcmp(argv[1], "EOPNOTSUPP") == 0 ? EOPNOTSUPP : EPERM;
  struct sock_filter f[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 444, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { .len = 4, .filter = f };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) return 3;
  execv(argv[2], &argv[2]);
  return 4;
}
`;

beforeAll(() => {
  launcherPath = buildLauncherInto(buildDir);
  abi = kernelAbi(launcherPath);
  const source = join(buildDir, "blocker.c");
  writeFileSync(source, BLOCKER_C);
  blocker = join(buildDir, "blocker");
  const cc = spawnSync(process.env.CC?.trim() || "cc", ["-o", blocker, source], { encoding: "utf8" });
  if (cc.status !== 0) throw new Error(`cannot compile the seccomp test helper: ${cc.stderr}`);
});
afterAll(() => rmSync(buildDir, { recursive: true, force: true }));

describe("landlock probe", () => {
  it("reports the kernel ABI, per-mode enforcement and network deny on this host", () => {
    expect.assertions(2);
    expect(abi).toBeGreaterThanOrEqual(4);
    expect(createLandlockBackend({ launcherPath }).probe()).toEqual({
      backend: "landlock",
      available: true,
      enforcement: "partial",
      reason: `workspace-write is partial: ${METADATA_GAP}`,
      facts: { landlockAbi: abi, seccomp: true, readOnlyEnforcement: "full" },
      networkDeny: true,
      denyRead: false,
      pty: true,
      domainAllowList: "partial",
    });
  });

  it("says why when the launcher could not be built (compiler error)", () => {
    expect.assertions(2);
    const dir = join(buildDir, "broken-cc");
    mkdirSync(dir);
    const path = buildLauncherInto(dir, { ...process.env, CC: "false" });
    expect(existsSync(path)).toBe(false);
    expect(createLandlockBackend({ launcherPath: path }).probe()).toEqual({
      backend: "landlock",
      available: false,
      reason: "Landlock launcher could not be built: false exited with 1: no compiler output",
    });
  });

  it("says why when no compiler exists at all", () => {
    expect.assertions(1);
    const dir = join(buildDir, "no-cc");
    mkdirSync(dir);
    const path = buildLauncherInto(dir, { ...process.env, CC: "suaveplan-no-such-cc" });
    expect(createLandlockBackend({ launcherPath: path }).probe()).toEqual({
      backend: "landlock",
      available: false,
      reason:
        "Landlock launcher could not be built: suaveplan-no-such-cc: C compiler not found (set CC or install cc)",
    });
  });

  it.each([
    [
      "EPERM",
      "Landlock unavailable: a seccomp filter or container runtime blocks the Landlock syscalls (Operation not permitted) (launcher setup failed)",
    ],
    [
      "ENOSYS",
      "Landlock unavailable: the kernel has no Landlock support (ENOSYS; needs CONFIG_SECURITY_LANDLOCK, Linux >= 5.13) (launcher setup failed)",
    ],
    [
      "EOPNOTSUPP",
      "Landlock unavailable: Landlock is built in but not enabled (EOPNOTSUPP; add landlock to the lsm= boot parameter) (launcher setup failed)",
    ],
  ])(
    "says why when landlock_create_ruleset fails with %s (a real seccomp filter in front)",
    (errno, reason) => {
      expect.assertions(1);
      const wrapper = join(buildDir, `blocked-${errno}`);
      writeFileSync(wrapper, `#!/bin/sh\nexec ${blocker} ${errno} ${launcherPath} "$@"\n`, { mode: 0o755 });
      expect(createLandlockBackend({ launcherPath: wrapper }).probe()).toEqual({
        backend: "landlock",
        available: false,
        reason,
      });
    },
  );

  it("refuses a launcherPath that is not executable, and never chmods it", () => {
    expect.assertions(2);
    const copy = join(buildDir, "packed-launcher");
    copyFileSync(launcherPath, copy);
    chmodSync(copy, 0o644);
    expect(createLandlockBackend({ launcherPath: copy }).probe()).toEqual({
      backend: "landlock",
      available: false,
      reason:
        "Landlock launcher is not executable; install the package with a package manager that keeps its mode bit (npm, pnpm), or pass a launcherPath you built",
    });
    expect(statSync(copy).mode & 0o777).toBe(0o644);
  });

  it("says why when the launcher was never built", () => {
    expect.assertions(1);
    expect(createLandlockBackend({ launcherPath: join(buildDir, "never-built") }).probe()).toEqual({
      backend: "landlock",
      available: false,
      reason:
        "Landlock launcher is not built: run the package build (tsup && node scripts/build-launcher.mjs) with a C compiler (cc or $CC) available",
    });
  });

  it("reports partial enforcement below ABI 3 and for workspace-write, naming the missing rights", () => {
    expect.assertions(5);
    expect(landlockEnforcement(3, "read-only", true)).toEqual({ enforcement: "full" });
    expect(landlockEnforcement(3, "read-only", false)).toEqual({
      enforcement: "partial",
      reason: `${METADATA_GAP} (no seccomp metadata filter here)`,
    });
    expect(landlockEnforcement(7, "workspace-write", true)).toEqual({
      enforcement: "partial",
      reason: METADATA_GAP,
    });
    expect(landlockEnforcement(2, "read-only", true)).toEqual({
      enforcement: "partial",
      reason:
        "kernel Landlock ABI 2 lacks TRUNCATE (ABI 3): truncate(2) of a file outside the writable roots is not governed",
    });
    expect(landlockEnforcement(1, "read-only", true)).toEqual({
      enforcement: "partial",
      reason:
        "kernel Landlock ABI 1 lacks TRUNCATE (ABI 3): truncate(2) of a file outside the writable roots is not governed; it lacks REFER (ABI 2): every rename or link across directories is refused, even inside the workspace",
    });
  });

  it("landlockLauncherPath() points into the package's dist/", () => {
    expect.assertions(1);
    expect(landlockLauncherPath()).toBe(join(PACKAGE_DIR, "dist", "landlock-launcher"));
  });
});

describe("landlock wrap", () => {
  let fx: Fixture;
  let probe: BackendProbeResult;
  const backend = () => createLandlockBackend({ launcherPath });

  beforeEach(() => {
    fx = createFixture();
    probe = {
      backend: "landlock",
      available: true,
      enforcement: "partial",
      facts: { landlockAbi: abi, seccomp: true, readOnlyEnforcement: "full" },
      networkDeny: true,
    };
  });
  afterEach(() => fx.dispose());

  it("builds the launcher argv for workspace-write with the temp area and TMPDIR", () => {
    expect.assertions(1);
    expect(backend().wrap(["bash", "-c", "echo hi"], policyFor(fx), probe)).toEqual({
      argv: [
        launcherPath,
        "--min-abi",
        String(abi),
        "--rw",
        fx.workspace,
        "--rw",
        fx.tempDir,
        "--setenv",
        "TMPDIR",
        fx.tempDir,
        "--",
        "bash",
        "-c",
        "echo hi",
      ],
      enforcement: "partial",
      denialSignatures: ["Permission denied", "Invalid cross-device link"],
      runnerFailureRules: [{ allowedExitCodes: [121], fatalSignatures: ["landlock-launcher:"] }],
      env: { TMPDIR: fx.tempDir },
      network: "allow",
      backend: "landlock",
    });
  });

  it("grants no writable root under read-only and adds --deny-net for network deny", () => {
    expect.assertions(1);
    const confined = backend().wrap(["true"], policyFor(fx, { mode: "read-only", network: "deny" }), probe);
    expect(confined).toEqual({
      argv: [launcherPath, "--min-abi", String(abi), "--deny-net", "--freeze-metadata", "--", "true"],
      enforcement: "full",
      denialSignatures: LANDLOCK_DENIAL_SIGNATURES,
      runnerFailureRules: LANDLOCK_RUNNER_FAILURE_RULES,
      network: "deny",
      backend: "landlock",
    });
  });

  it("refuses protected paths inside a writable root (Landlock cannot subtract a sub-path)", () => {
    expect.assertions(2);
    const policy = policyFor(fx, { protectedPaths: [join(fx.workspace, ".git", "hooks")] });
    expect(() => backend().wrap(["true"], policy, probe)).toThrow(SandboxUnavailableError);
    expect(() => backend().wrap(["true"], policy, probe)).toThrow(
      "The landlock backend cannot keep policy.protectedPaths read-only: 1 of them overlap a writable root, and Landlock rules only add access beneath a directory, never subtract a sub-path. Use the landlock+bwrap backend, or drop those paths from protectedPaths (SANDBOX_UNAVAILABLE); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_UNAVAILABLE.md",
    );
  });

  it("accepts protected paths under read-only, where everything is read-only anyway", () => {
    expect.assertions(1);
    const policy = policyFor(fx, {
      mode: "read-only",
      protectedPaths: [join(fx.workspace, ".git", "hooks")],
    });
    expect(backend().wrap(["true"], policy, probe).argv).toEqual([
      launcherPath,
      "--min-abi",
      String(abi),
      "--freeze-metadata",
      "--",
      "true",
    ]);
  });

  it("fails closed when the probe said unavailable", () => {
    expect.assertions(2);
    const down: BackendProbeResult = {
      backend: "landlock",
      available: false,
      reason: "kernel without Landlock",
    };
    expect(() => backend().wrap(["true"], policyFor(fx), down)).toThrow(SandboxUnavailableError);
    expect(() => backend().wrap(["true"], policyFor(fx), down)).toThrow(
      "The landlock backend cannot confine here: kernel without Landlock. Use another backend or fix the host (SANDBOX_UNAVAILABLE); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_UNAVAILABLE.md",
    );
  });

  it("fails closed on network deny when the probe found none", () => {
    expect.assertions(1);
    const noNet: BackendProbeResult = {
      ...probe,
      networkDeny: false,
      reason: "network deny unavailable: needs Landlock ABI 4, kernel has 3",
    };
    expect(() => backend().wrap(["true"], policyFor(fx, { network: "deny" }), noNet)).toThrow(
      'The landlock backend cannot enforce policy.network "deny" here (network deny unavailable: needs Landlock ABI 4, kernel has 3). Use a backend that can, or allow the network (SANDBOX_UNAVAILABLE); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_UNAVAILABLE.md',
    );
  });

  it("rejects relative roots and unconfinable modes with SANDBOX_INVALID_POLICY", () => {
    expect.assertions(2);
    expect(() => backend().wrap(["true"], policyFor(fx, { workspaceRoot: "ws" }), probe)).toThrow(
      expect.objectContaining({
        code: "SANDBOX_INVALID_POLICY",
        message:
          "policy.workspaceRoot must be an absolute, canonical path (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md",
      }),
    );
    const unconfined = { ...policyFor(fx), mode: "danger-full-access" } as unknown as ReturnType<
      typeof policyFor
    >;
    expect(() => backend().wrap(["true"], unconfined, probe)).toThrow(
      expect.objectContaining({ code: "SANDBOX_INVALID_POLICY" }),
    );
  });
});

describe("landlock launcher", () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = createFixture();
  });
  afterEach(() => fx.dispose());

  it("a bad flag exits with the dedicated code and a prefixed line the runner-failure rule matches", async () => {
    expect.assertions(2);
    const result = await run([launcherPath, "--no-such-flag", "--", "touch", join(fx.workspace, "ran")]);
    expect(result).toEqual({
      code: LANDLOCK_LAUNCHER_SETUP_FAILED_EXIT_CODE,
      signal: null,
      stdout: "",
      stderr:
        "landlock-launcher: unknown option '--no-such-flag' (usage: landlock-launcher [--min-abi N] [--rw DIR]... [--deny-net] [--freeze-metadata] [--sockets none|unix|unix+inet|tcp] [--allow-tcp-connect PORT] [--bridge PORT:SOCKET] [--setenv NAME VALUE]... [--proxy-env] [--seccomp-only] -- CMD [ARG]...)\n",
    });
    expect(runnerFailureLine(LANDLOCK_RUNNER_FAILURE_RULES, result.code, result.stderr)).toBe(
      "landlock-launcher: unknown option '--no-such-flag' (usage: landlock-launcher [--min-abi N] [--rw DIR]... [--deny-net] [--freeze-metadata] [--sockets none|unix|unix+inet|tcp] [--allow-tcp-connect PORT] [--bridge PORT:SOCKET] [--setenv NAME VALUE]... [--proxy-env] [--seccomp-only] -- CMD [ARG]...)",
    );
  });

  it("a missing writable root fails closed and never runs the command", async () => {
    expect.assertions(3);
    const missing = join(fx.root, "missing");
    const marker = join(fx.workspace, "ran");
    const result = await run([launcherPath, "--rw", missing, "--", "touch", marker]);
    expect(result.code).toBe(LANDLOCK_LAUNCHER_SETUP_FAILED_EXIT_CODE);
    expect(result.stderr).toBe(
      `landlock-launcher: writable root ${missing} is not a directory: No such file or directory\n`,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it("an ABI floor above the kernel's fails closed", async () => {
    expect.assertions(1);
    const result = await run([launcherPath, "--min-abi", "999", "--", "true"]);
    expect(result).toEqual({
      code: 121,
      signal: null,
      stdout: "",
      stderr: `landlock-launcher: kernel Landlock ABI ${abi} is older than the required ABI 999\n`,
    });
  });

  it("a missing command is the command's failure (127), not a runner failure", async () => {
    expect.assertions(2);
    const result = await run([launcherPath, "--", "suaveplan-no-such-command"]);
    expect(result).toEqual({
      code: 127,
      signal: null,
      stdout: "",
      stderr: "landlock-launcher: cannot execute suaveplan-no-such-command: No such file or directory\n",
    });
    expect(runnerFailureLine(LANDLOCK_RUNNER_FAILURE_RULES, result.code, result.stderr)).toBeUndefined();
  });

  it("--abi prints the kernel ABI", () => {
    expect.assertions(1);
    const result = spawnSync(launcherPath, ["--abi"], { encoding: "utf8" });
    expect({ status: result.status, stdout: result.stdout }).toEqual({ status: 0, stdout: `${abi}\n` });
  });

  it("the confined command runs in its own session", async () => {
    expect.assertions(1);
    const result = await run([
      launcherPath,
      "--",
      "bash",
      "-c",
      // The launcher leads a new session and stays as the command's parent (its subreaper).
      `test "$(ps -o sid= -p $$)" -eq $PPID && test "$(ps -o sid= -p $$)" -ne ${process.pid} && test "$(ps -o sid= -p $PPID)" -ne "$(ps -o sid= -p ${process.pid})" && echo own-session`,
    ]);
    expect(result).toMatchObject({ code: 0, stdout: "own-session\n" });
  });

  it("the dedicated exit code constant matches the launcher's C source", () => {
    expect.assertions(1);
    const src = readFileSync(join(PACKAGE_DIR, "native", "landlock-launcher.c"), "utf8");
    expect(src).toContain(`#define LAUNCHER_SETUP_FAILED ${LANDLOCK_LAUNCHER_SETUP_FAILED_EXIT_CODE}\n`);
  });
});
