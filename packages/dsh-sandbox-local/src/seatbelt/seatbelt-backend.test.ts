import { describe, expect, it } from "vitest";
import { createFakeHost } from "../../test/support/fake-host.js";
import type { LocalConfinePolicy } from "../backend/local-backend.js";
import { createSeatbeltBackend, SEATBELT_RUNNER_FAILURE_RULES } from "./seatbelt-backend.js";
import { buildSeatbeltProfile } from "./seatbelt-profile.js";

const write: LocalConfinePolicy = {
  mode: "workspace-write",
  workspaceRoot: "/Users/me/project",
  tempDir: "/private/var/folders/xy/T/suaveplan-sbx-1",
  protectedPaths: ["/Users/me/project/.git/hooks", "/Users/me/project/.git/config"],
  network: "allow",
};

describe("buildSeatbeltProfile", () => {
  it("workspace-write: denies file writes except /dev/null, the workspace and the temp area; protected paths denied", () => {
    expect(buildSeatbeltProfile(write)).toEqual({
      profile: `(version 1)
(allow default)
(deny file-write* (require-not (require-any (literal "/dev/null") (subpath (param "WORKSPACE_ROOT")) (subpath (param "TEMP_DIR")))))
(deny file-write* (subpath (param "PROTECTED_0")))
(deny file-write* (subpath (param "PROTECTED_1")))
`,
      params: {
        WORKSPACE_ROOT: "/Users/me/project",
        TEMP_DIR: "/private/var/folders/xy/T/suaveplan-sbx-1",
        PROTECTED_0: "/Users/me/project/.git/hooks",
        PROTECTED_1: "/Users/me/project/.git/config",
      },
    });
  });

  it("read-only: only /dev/null is writable and no path parameter is passed", () => {
    expect(buildSeatbeltProfile({ ...write, mode: "read-only", tempDir: undefined })).toEqual({
      profile: `(version 1)
(allow default)
(deny file-write* (require-not (require-any (literal "/dev/null"))))
`,
      params: {},
    });
  });

  it('network "deny" adds (deny network*)', () => {
    expect(buildSeatbeltProfile({ ...write, mode: "read-only", network: "deny" }).profile).toBe(`(version 1)
(allow default)
(deny file-write* (require-not (require-any (literal "/dev/null"))))
(deny network*)
`);
  });

  it("never splices a path into the profile text, so a hostile path cannot inject SBPL", () => {
    const hostile = '/tmp/x")) (allow file-write* (subpath "/';
    const { profile, params } = buildSeatbeltProfile({
      ...write,
      workspaceRoot: hostile,
      protectedPaths: [],
    });
    expect(profile.includes(hostile)).toBe(false);
    expect(params.WORKSPACE_ROOT).toBe(hostile);
  });
});

describe("seatbelt backend", () => {
  it("reports why not off macOS", () => {
    expect(createSeatbeltBackend({ host: createFakeHost({ platform: "linux" }) }).probe()).toEqual({
      backend: "seatbelt",
      available: false,
      reason: "Seatbelt (sandbox-exec) runs only on macOS; this host is linux",
    });
  });

  it("on macOS probes sandbox-exec once and wraps argv as sandbox-exec -p <profile> -D… -- argv", () => {
    const host = createFakeHost({ platform: "darwin", files: { "/usr/bin/sandbox-exec": "" } });
    const backend = createSeatbeltBackend({ host });
    const probe = backend.probe();
    expect(probe).toEqual({
      backend: "seatbelt",
      available: true,
      enforcement: "full",
      networkDeny: true,
      facts: { sandboxExecPath: "/usr/bin/sandbox-exec" },
    });
    expect(host.calls.map((c) => [c.file, c.args[0], c.args.at(-2), c.args.at(-1)])).toEqual([
      ["/usr/bin/sandbox-exec", "-p", "--", "/usr/bin/true"],
    ]);
    const confined = backend.wrap(["bash", "-c", "ls"], write, probe);
    expect(confined).toEqual({
      argv: [
        "/usr/bin/sandbox-exec",
        "-p",
        buildSeatbeltProfile(write).profile,
        "-D",
        "WORKSPACE_ROOT=/Users/me/project",
        "-D",
        "TEMP_DIR=/private/var/folders/xy/T/suaveplan-sbx-1",
        "-D",
        "PROTECTED_0=/Users/me/project/.git/hooks",
        "-D",
        "PROTECTED_1=/Users/me/project/.git/config",
        "--",
        "bash",
        "-c",
        "ls",
      ],
      enforcement: "full",
      denialSignatures: ["Operation not permitted"],
      runnerFailureRules: SEATBELT_RUNNER_FAILURE_RULES,
      backend: "seatbelt",
      network: "allow",
      env: { TMPDIR: "/private/var/folders/xy/T/suaveplan-sbx-1" },
    });
  });

  it("explains a nested sandbox (sandbox_apply refused)", () => {
    const host = createFakeHost({
      platform: "darwin",
      files: { "/usr/bin/sandbox-exec": "" },
      run: () => ({
        status: 71,
        stdout: "",
        stderr: "sandbox-exec: sandbox_apply: Operation not permitted\n",
      }),
    });
    expect(createSeatbeltBackend({ host }).probe().reason).toBe(
      'this process already runs inside a Seatbelt sandbox and cannot apply another (sandbox-exec said: "sandbox-exec: sandbox_apply: Operation not permitted")',
    );
  });
});
