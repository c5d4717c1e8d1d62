// writableRoots, denyRead and protected paths on real bwrap and real Landlock,
// spawned from the returned argv; and what each backend's probe says it enforces.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LocalBackendName } from "../src/backend/index.js";
import { DEFAULT_PROTECTED_PATHS, LocalSandboxProvider, SECRETS_DENY_READ } from "../src/index.js";
import { resolveDenyRead } from "../src/provider/path-policy.js";
import { runConfined } from "./support/run-confined.js";

const LINUX_BACKENDS: readonly LocalBackendName[] = ["bwrap", "landlock", "landlock+bwrap"];
const usable = (name: LocalBackendName): boolean =>
  new LocalSandboxProvider({ backends: [name] }).probe()[0]?.available === true;
const MASKING_BACKENDS = LINUX_BACKENDS.filter((name) => name !== "landlock");

let dir: string;
let workspace: string;
let outside: string;
const providers: LocalSandboxProvider[] = [];
function provider(options: ConstructorParameters<typeof LocalSandboxProvider>[0]): LocalSandboxProvider {
  const p = new LocalSandboxProvider(options);
  providers.push(p);
  return p;
}
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-vocab-")));
  workspace = join(dir, "ws");
  outside = join(dir, "outside");
  mkdirSync(workspace);
  mkdirSync(outside);
});
afterEach(async () => {
  for (const p of providers.splice(0)) {
    p.dispose();
    await p.settled();
  }
  rmSync(dir, { recursive: true, force: true });
});

function thrown(fn: () => unknown): { name: string; code: string; message: string } | undefined {
  try {
    fn();
  } catch (error) {
    const e = error as { name: string; code: string; message: string };
    return { name: e.name, code: e.code, message: e.message };
  }
  return undefined;
}

describe("probe: what each Linux backend can enforce", () => {
  it("reports denyRead and pty per backend", () => {
    const probes = provider({ backends: [...LINUX_BACKENDS] })
      .probe()
      .filter((p) => p.available)
      .map((p) => ({ backend: p.backend, denyRead: p.denyRead, pty: p.pty }));
    const expected = [
      { backend: "bwrap", denyRead: true, pty: true },
      { backend: "landlock", denyRead: false, pty: true },
      { backend: "landlock+bwrap", denyRead: true, pty: true },
    ].filter((row) => usable(row.backend as LocalBackendName));
    expect(probes).toEqual(expected);
  });
});

for (const name of LINUX_BACKENDS) {
  describe.skipIf(!usable(name))(`${name}: writableRoots`, () => {
    it("an extra root (provider option or per call) is writable under workspace-write, not under read-only", async () => {
      const cache = join(dir, "cache");
      const perCall = join(dir, "per-call");
      mkdirSync(cache);
      mkdirSync(perCall);
      const p = provider({ backends: [name], writableRoots: [cache], protectedPaths: [] });
      const write = `echo a > ${cache}/a && echo b > ${perCall}/b && echo wrote; echo c > ${outside}/c 2>/dev/null || echo outside-refused`;
      const rw = await runConfined(p, write, {
        mode: "workspace-write",
        workspaceRoot: workspace,
        writableRoots: [perCall],
      } as never);
      expect(rw.stdout).toBe("wrote\noutside-refused\n");
      expect([readFileSync(join(cache, "a"), "utf8"), readFileSync(join(perCall, "b"), "utf8")]).toEqual([
        "a\n",
        "b\n",
      ]);
      const ro = await runConfined(p, `echo x > ${cache}/x 2>/dev/null || echo refused`, {
        mode: "read-only",
        workspaceRoot: workspace,
      });
      expect({ stdout: ro.stdout, made: existsSync(join(cache, "x")) }).toEqual({
        stdout: "refused\n",
        made: false,
      });
    });
  });
}

describe("writableRoots input", () => {
  it("names the field of a root that does not resolve, is relative, or is /", () => {
    const p = provider({ backends: ["bwrap"] });
    const policy = (writableRoots: string[]) =>
      ({ mode: "workspace-write", workspaceRoot: workspace, writableRoots }) as never;
    expect([
      thrown(() => p.confine(["true"], policy([join(dir, "missing")]))),
      thrown(() => p.confine(["true"], policy(["relative/dir"]))),
      thrown(() => p.confine(["true"], policy(["/"]))),
      thrown(() => provider({ writableRoots: ["cache"] })),
    ]).toEqual([
      {
        name: "SandboxPolicyError",
        code: "SANDBOX_INVALID_POLICY",
        message:
          "policy.writableRoots[0] does not resolve to a directory (ENOENT); create it first (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md",
      },
      {
        name: "SandboxPolicyError",
        code: "SANDBOX_INVALID_POLICY",
        message:
          "policy.writableRoots[0] must be an absolute path (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md",
      },
      {
        name: "SandboxPolicyError",
        code: "SANDBOX_INVALID_POLICY",
        message:
          'policy.writableRoots[0] must not be "/" (that is danger-full-access) (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md',
      },
      {
        name: "SandboxError",
        code: "SANDBOX_INVALID_OPTIONS",
        message:
          "LocalSandboxProvider: writableRoots[0] must be an absolute path (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md",
      },
    ]);
  });
});

for (const name of MASKING_BACKENDS) {
  describe.skipIf(!usable(name))(`${name}: denyRead`, () => {
    it("hides a denied file, directory and glob match, under both modes, and reports them", async () => {
      const secrets = join(outside, "secrets");
      mkdirSync(secrets);
      writeFileSync(join(secrets, "id_rsa"), "KEY\n");
      writeFileSync(join(outside, "token.txt"), "TOKEN\n");
      writeFileSync(join(workspace, "prod.env"), "DB=secret\n");
      writeFileSync(join(workspace, "readme.md"), "hello\n");
      const p = provider({ backends: [name], denyRead: [secrets, join(outside, "token.txt")] });
      const script = `ls -A ${secrets}; cat ${secrets}/id_rsa 2>/dev/null || echo no-key; cat ${outside}/token.txt; echo [; cat prod.env; cat readme.md`;
      const runs = [];
      // A file in the workspace is hidden under read-only; under workspace-write
      // (a writable root) it is refused, see deny-read-replaced.test.ts.
      for (const [mode, perCall] of [
        ["read-only", [join(workspace, "*.env")]],
        ["workspace-write", []],
      ] as const) {
        const run = await runConfined(p, script, {
          mode,
          workspaceRoot: workspace,
          denyRead: perCall,
        } as never);
        runs.push({ mode, stdout: run.stdout, deniedReads: run.confined.deniedReads });
      }
      expect(runs).toEqual([
        {
          mode: "read-only",
          stdout: "no-key\n[\nhello\n",
          deniedReads: [secrets, join(outside, "token.txt"), join(workspace, "prod.env")].sort(),
        },
        {
          mode: "workspace-write",
          stdout: "no-key\n[\nDB=secret\nhello\n",
          deniedReads: [secrets, join(outside, "token.txt")].sort(),
        },
      ]);
      expect(readFileSync(join(secrets, "id_rsa"), "utf8")).toBe("KEY\n");
    });

    it("a denied path reached through a symbolic link is hidden at its target", async () => {
      writeFileSync(join(outside, "key"), "KEY\n");
      symlinkSync(join(outside, "key"), join(workspace, "link-to-key"));
      const p = provider({ backends: [name], denyRead: [join(workspace, "link-to-key")] });
      const run = await runConfined(p, `cat link-to-key; cat ${outside}/key; echo done`, {
        mode: "read-only",
        workspaceRoot: workspace,
      });
      expect(run.stdout).toBe("done\n");
    });
  });
}

describe("denyRead on plain Landlock, and backend selection", () => {
  it.skipIf(!usable("landlock"))(
    "plain landlock fails closed with SANDBOX_UNAVAILABLE naming the path",
    () => {
      writeFileSync(join(outside, "key"), "KEY\n");
      const p = provider({ backends: ["landlock"] });
      const error = thrown(() =>
        p.confine(["true"], {
          mode: "read-only",
          workspaceRoot: workspace,
          denyRead: [join(outside, "key")],
        } as never),
      );
      expect(error).toEqual({
        name: "SandboxUnavailableError",
        code: "SANDBOX_UNAVAILABLE",
        message: `The landlock backend cannot hide policy.denyRead path ${JSON.stringify(join(outside, "key"))}: Landlock grants reads beneath "/" and cannot subtract a sub-path from an allowed parent. Use the bwrap or landlock+bwrap backend, or drop denyRead (SANDBOX_UNAVAILABLE); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_UNAVAILABLE.md`,
      });
    },
  );

  it.skipIf(!usable("bwrap"))("a provider-level denyRead skips backends that cannot hide reads", () => {
    const p = provider({ backends: ["landlock", "bwrap"], denyRead: [join(outside, "*")] });
    expect(p.selectedBackend().backend).toBe("bwrap");
  });

  it("refuses a denied path that contains the workspace, and expands ~/ and the secrets preset", () => {
    expect(thrown(() => resolveDenyRead([dir], workspace, []))).toEqual({
      name: "SandboxPolicyError",
      code: "SANDBOX_INVALID_POLICY",
      message: `denyRead entry ${JSON.stringify(dir)} contains the workspace or a writable root; hiding it would hide them. Deny narrower paths (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md`,
    });
    const home = join(dir, "home");
    mkdirSync(join(home, ".ssh"), { recursive: true });
    mkdirSync(join(home, ".config", "gcloud"), { recursive: true });
    writeFileSync(join(home, ".netrc"), "");
    writeFileSync(join(home, ".bash_history"), "");
    expect(resolveDenyRead(SECRETS_DENY_READ, workspace, [], home)).toEqual([
      { path: join(home, ".bash_history"), directory: false },
      { path: join(home, ".config", "gcloud"), directory: true },
      { path: join(home, ".netrc"), directory: false },
      { path: join(home, ".ssh"), directory: true },
    ]);
  });
});

for (const name of MASKING_BACKENDS) {
  describe.skipIf(!usable(name))(`${name}: protected paths`, () => {
    const policy = () => ({ mode: "workspace-write", workspaceRoot: workspace }) as const;

    it("the default set keeps VCS, agent, editor and shell start-up files read-only", async () => {
      const files = [".gitmodules", ".mcp.json", ".envrc", ".bashrc", ".profile", ".zshrc"];
      const dirs = [".vscode", ".idea", ".codex", ".claude", ".git/hooks", ".git/modules/sub/hooks"];
      for (const f of files) writeFileSync(join(workspace, f), "original\n");
      for (const d of dirs) {
        mkdirSync(join(workspace, d), { recursive: true });
        writeFileSync(join(workspace, d, "x"), "original\n");
      }
      const p = provider({ backends: [name] });
      const attack = [...files, ...dirs.map((d) => `${d}/x`)]
        .map((f) => `echo evil > ${f} 2>/dev/null; rm -f ${f} 2>/dev/null`)
        .join("; ");
      const run = await runConfined(p, `${attack}; echo ok > free.txt; echo done`, policy());
      expect(run.stdout).toBe("done\n");
      const contents = [...files, ...dirs.map((d) => `${d}/x`)].map((f) =>
        readFileSync(join(workspace, f), "utf8"),
      );
      expect(new Set(contents)).toEqual(new Set(["original\n"]));
      expect(readFileSync(join(workspace, "free.txt"), "utf8")).toBe("ok\n");
      expect(DEFAULT_PROTECTED_PATHS).toContain(".git/modules/**/hooks");
    });

    it("a protected path inside an extra writable root stays read-only", async () => {
      const other = join(dir, "other-repo");
      mkdirSync(join(other, ".git", "hooks"), { recursive: true });
      const p = provider({ backends: [name], writableRoots: [other] });
      const run = await runConfined(
        p,
        `echo evil > ${other}/.git/hooks/pre-commit 2>/dev/null || echo refused; echo ok > ${other}/file`,
        policy(),
      );
      expect({ stdout: run.stdout, hook: existsSync(join(other, ".git", "hooks", "pre-commit")) }).toEqual({
        stdout: "refused\n",
        hook: false,
      });
    });

    it("a protected path that is a symbolic link fails closed, naming it", () => {
      mkdirSync(join(outside, "hooks"));
      mkdirSync(join(workspace, ".git"));
      symlinkSync(join(outside, "hooks"), join(workspace, ".git", "hooks"));
      const p = provider({ backends: [name] });
      expect(thrown(() => p.confine(["true"], policy()))).toEqual({
        name: "SandboxUnavailableError",
        code: "SANDBOX_UNAVAILABLE",
        message:
          'protected path ".git/hooks" is a symbolic link; refusing to confine (a link can be re-pointed, and a read-only bind follows it). Replace the link with the real file or directory, or drop it from protectedPaths (SANDBOX_UNAVAILABLE); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_UNAVAILABLE.md',
      });
    });

    it("a protected path that does not exist may be created by the command, and is protected from the next call on", async () => {
      const p = provider({ backends: [name] });
      const first = await runConfined(p, "echo '{\"mine\": 1}' > .mcp.json && echo created", policy());
      expect(first.stdout).toBe("created\n");
      const second = await runConfined(p, "echo evil > .mcp.json 2>/dev/null || echo refused", policy());
      expect({ stdout: second.stdout, file: readFileSync(join(workspace, ".mcp.json"), "utf8") }).toEqual({
        stdout: "refused\n",
        file: '{"mine": 1}\n',
      });
    });
  });
}

describe.skipIf(!usable("bwrap"))("protected path globs", () => {
  it("expand against the workspace when confine runs", () => {
    mkdirSync(join(workspace, "pkg-a", ".git", "hooks"), { recursive: true });
    mkdirSync(join(workspace, "pkg-b", ".git", "hooks"), { recursive: true });
    const p = provider({ backends: ["bwrap"], protectedPaths: ["*/.git/hooks"] });
    const argv = p.confine(["true"], { mode: "workspace-write", workspaceRoot: workspace }).argv;
    const roBinds = argv.flatMap((arg, i) =>
      arg === "--ro-bind" && argv[i + 1] !== "/" ? [argv[i + 1]] : [],
    );
    expect(roBinds).toEqual([
      join(workspace, "pkg-a", ".git", "hooks"),
      join(workspace, "pkg-b", ".git", "hooks"),
    ]);
  });
});
