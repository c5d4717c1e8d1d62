import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConfinedArgv, SandboxPolicy } from "@suaveplan/dsh-sandbox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFakeHost } from "../../test/support/fake-host.js";
import type {
  BackendProbeResult,
  LocalBackend,
  LocalBackendName,
  LocalConfinePolicy,
} from "../backend/local-backend.js";
import { defaultBackendsFor } from "./backend-registry.js";
import { LocalSandboxProvider } from "./local-sandbox-provider.js";

let base: string;
let workspace: string;
let tempRoot: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-provider-")));
  workspace = join(base, "ws");
  tempRoot = join(base, "tmp");
  mkdirSync(workspace);
  mkdirSync(tempRoot);
});
/** Every provider a test made: disposed and settled before its temp root goes, so no background removal races the cleanup. */
const providers: LocalSandboxProvider[] = [];
class TrackedProvider extends LocalSandboxProvider {
  constructor(...args: ConstructorParameters<typeof LocalSandboxProvider>) {
    super(...args);
    providers.push(this);
  }
}
afterEach(async () => {
  for (const provider of providers.splice(0)) {
    provider.dispose();
    await provider.settled();
  }
  rmSync(base, { recursive: true, force: true });
});

interface Recorder {
  probes: number;
  wraps: LocalConfinePolicy[];
}

function fakeBackend(
  name: LocalBackendName,
  probe: Omit<BackendProbeResult, "backend">,
  recorder: Recorder,
  wrap?: (argv: readonly string[]) => string[],
): LocalBackend {
  return {
    name,
    probe() {
      recorder.probes++;
      return { backend: name, ...probe };
    },
    wrap(argv, policy): ConfinedArgv {
      recorder.wraps.push(policy);
      return {
        argv: wrap?.(argv) ?? [`/runner/${name}`, "--", ...argv],
        enforcement: "full",
        denialSignatures: ["denied!"],
        runnerFailureRules: [],
      };
    },
  };
}

function thrown(fn: () => unknown): { name: string; code: string; message: string } {
  try {
    fn();
  } catch (error) {
    const e = error as { name: string; code: string; message: string };
    return { name: e.name, code: e.code, message: e.message };
  }
  throw new Error("expected a throw");
}

const linuxHost = createFakeHost({ platform: "linux" });

describe("LocalSandboxProvider", () => {
  it("uses the first usable backend in preference order and reports every probe", () => {
    const rec: Recorder = { probes: 0, wraps: [] };
    const provider = new TrackedProvider({
      host: linuxHost,
      tempRoot,
      backends: ["landlock+bwrap", "bwrap", "landlock"],
      registry: {
        "landlock+bwrap": () =>
          fakeBackend("landlock+bwrap", { available: false, reason: "launcher missing" }, rec),
        bwrap: () => fakeBackend("bwrap", { available: true, enforcement: "full", networkDeny: true }, rec),
        landlock: () => fakeBackend("landlock", { available: true, enforcement: "partial" }, rec),
      },
    });
    const confined = provider.confine(["true"], { mode: "read-only", workspaceRoot: workspace });
    expect(confined.argv).toEqual(["/runner/bwrap", "--", "true"]);
    expect(confined.backend).toBe("bwrap");
    expect(rec.probes).toBe(2);
    expect(provider.probe()).toEqual([
      { backend: "landlock+bwrap", available: false, reason: "launcher missing" },
      { backend: "bwrap", available: true, enforcement: "full", networkDeny: true },
      { backend: "landlock", available: true, enforcement: "partial" },
    ]);
    expect(rec.probes).toBe(3);
  });

  it("probes each backend once per provider, never per command", () => {
    const rec: Recorder = { probes: 0, wraps: [] };
    const provider = new TrackedProvider({
      host: linuxHost,
      tempRoot,
      backends: ["bwrap"],
      registry: { bwrap: () => fakeBackend("bwrap", { available: true, enforcement: "full" }, rec) },
    });
    for (let i = 0; i < 5; i++)
      provider.confine(["true"], { mode: "workspace-write", workspaceRoot: workspace }).dispose?.();
    provider.probe();
    provider.probe();
    expect({ probes: rec.probes, wraps: rec.wraps.length }).toEqual({ probes: 1, wraps: 5 });
  });

  it("throws SANDBOX_UNAVAILABLE listing every backend's reason when none is usable", () => {
    const provider = new TrackedProvider({ host: linuxHost, backends: ["seatbelt", "windows-acl"] });
    const error = thrown(() => provider.confine(["true"], { mode: "read-only", workspaceRoot: workspace }));
    expect(error).toEqual({
      name: "SandboxUnavailableError",
      code: "SANDBOX_UNAVAILABLE",
      message:
        "no sandbox backend can confine commands on this host, and running them unconfined is never an option. seatbelt: Seatbelt (sandbox-exec) runs only on macOS; this host is linux; windows-acl: the restricted-token ACL backend runs only on Windows; this host is linux (SANDBOX_UNAVAILABLE); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_UNAVAILABLE.md",
    });
  });

  it("refuses a backend that hands back the caller's argv unwrapped (and removes its temp area)", async () => {
    const rec: Recorder = { probes: 0, wraps: [] };
    const provider = new TrackedProvider({
      host: linuxHost,
      tempRoot,
      backends: ["bwrap"],
      registry: {
        bwrap: () => fakeBackend("bwrap", { available: true, enforcement: "full" }, rec, (argv) => [...argv]),
      },
    });
    expect(
      thrown(() => provider.confine(["true"], { mode: "workspace-write", workspaceRoot: workspace })),
    ).toEqual({
      name: "SandboxUnavailableError",
      code: "SANDBOX_UNAVAILABLE",
      message:
        "backend bwrap returned an argv that is not wrapped by a sandbox runner; refusing to run it unconfined (SANDBOX_UNAVAILABLE); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_UNAVAILABLE.md",
    });
    await provider.settled();
    expect(existsSync(rec.wraps[0]?.tempDir as string)).toBe(false);
    provider.dispose();
  });

  it('with network "deny", skips backends that cannot cut the network', () => {
    const rec: Recorder = { probes: 0, wraps: [] };
    const provider = new TrackedProvider({
      host: linuxHost,
      tempRoot,
      network: "deny",
      backends: ["landlock", "bwrap"],
      registry: {
        landlock: () =>
          fakeBackend("landlock", { available: true, enforcement: "full", networkDeny: false }, rec),
        bwrap: () => fakeBackend("bwrap", { available: true, enforcement: "full", networkDeny: true }, rec),
      },
    });
    expect(provider.selectedBackend().backend).toBe("bwrap");
    provider.confine(["true"], { mode: "read-only", workspaceRoot: workspace });
    expect(rec.wraps[0]?.network).toBe("deny");
  });

  it("rejects danger-full-access at run time (SANDBOX_INVALID_POLICY) before probing anything", () => {
    const rec: Recorder = { probes: 0, wraps: [] };
    const provider = new TrackedProvider({
      host: linuxHost,
      backends: ["bwrap"],
      registry: { bwrap: () => fakeBackend("bwrap", { available: true, enforcement: "full" }, rec) },
    });
    const policy = { mode: "danger-full-access", workspaceRoot: workspace } as unknown as SandboxPolicy;
    expect(thrown(() => provider.confine(["true"], policy)).code).toBe("SANDBOX_INVALID_POLICY");
    expect(rec.probes).toBe(0);
  });

  it("hands the backend a canonical root, existing canonical protected paths, the session id and a private temp dir", async () => {
    const rec: Recorder = { probes: 0, wraps: [] };
    mkdirSync(join(workspace, ".git", "hooks"), { recursive: true });
    symlinkSync(workspace, join(base, "ws-link"));
    const provider = new TrackedProvider({
      host: linuxHost,
      tempRoot,
      backends: ["bwrap"],
      registry: { bwrap: () => fakeBackend("bwrap", { available: true, enforcement: "full" }, rec) },
    });
    const confined = provider.confine(["true"], {
      mode: "workspace-write",
      workspaceRoot: join(base, "ws-link"),
      sessionId: "s1",
    });
    const seen = rec.wraps[0] as LocalConfinePolicy;
    expect({ ...seen, tempDir: seen.tempDir?.startsWith(join(tempRoot, "suaveplan-sbx-")) }).toEqual({
      mode: "workspace-write",
      workspaceRoot: workspace,
      network: "allow",
      protectedPaths: [join(workspace, ".git", "hooks")],
      tempDir: true,
      sessionId: "s1",
    });
    expect(existsSync(seen.tempDir as string)).toBe(true);
    confined.dispose?.();
    await provider.settled(); // removal runs in the background
    expect(existsSync(seen.tempDir as string)).toBe(false);
    provider.confine(["true"], { mode: "read-only", workspaceRoot: workspace });
    expect(rec.wraps[1]?.tempDir).toBeUndefined();
    provider.dispose();
  });

  it("each workspace-write call gets its own fresh, empty, private temp dir, never one another call had", async () => {
    const rec: Recorder = { probes: 0, wraps: [] };
    const provider = new TrackedProvider({
      host: linuxHost,
      tempRoot,
      backends: ["bwrap"],
      registry: { bwrap: () => fakeBackend("bwrap", { available: true, enforcement: "full" }, rec) },
    });
    const policy: SandboxPolicy = { mode: "workspace-write", workspaceRoot: workspace };
    const seen: { dir: string; entries: string[]; private: boolean }[] = [];
    const open: ConfinedArgv[] = [];
    for (let i = 0; i < 6; i++) {
      // alternate: back-to-back calls (no spare ready) and calls after the background work ran (spare)
      if (i % 2 === 1) await provider.settled();
      const confined = provider.confine(["true"], policy);
      const dir = rec.wraps[i]?.tempDir as string;
      seen.push({ dir, entries: readdirSync(dir), private: (statSync(dir).mode & 0o077) === 0 });
      writeFileSync(join(dir, "used"), String(i));
      if (i % 3 === 2) confined.dispose?.();
      else open.push(confined);
    }
    expect(new Set(seen.map((s) => s.dir)).size).toBe(6);
    expect(seen.map(({ entries, private: p }) => ({ entries, private: p }))).toEqual(
      Array(6).fill({ entries: [], private: true }),
    );
    for (const confined of open) confined.dispose?.();
    await provider.settled();
    expect(seen.map((s) => existsSync(s.dir))).toEqual(Array(6).fill(false));
    provider.dispose();
  });

  it("dispose() removes every temp area still held, being removed or spare, is idempotent, and later confine calls fail closed", async () => {
    const rec: Recorder = { probes: 0, wraps: [] };
    const provider = new TrackedProvider({
      host: linuxHost,
      tempRoot,
      backends: ["bwrap"],
      registry: { bwrap: () => fakeBackend("bwrap", { available: true, enforcement: "full" }, rec) },
    });
    provider.confine(["true"], { mode: "workspace-write", workspaceRoot: workspace });
    await provider.settled(); // the spare is ready
    const used = provider.confine(["true"], { mode: "workspace-write", workspaceRoot: workspace });
    await provider.settled(); // and another spare
    provider.confine(["true"], { mode: "workspace-write", workspaceRoot: workspace });
    await provider.settled(); // a third spare
    used.dispose?.(); // its background removal is queued, not yet run
    expect(readdirSync(tempRoot)).toHaveLength(4);
    provider.dispose();
    expect(readdirSync(tempRoot)).toEqual([]); // held, being removed and spare: all gone, synchronously
    provider[Symbol.dispose]();
    expect(rec.wraps.map((p) => existsSync(p.tempDir as string))).toEqual([false, false, false]);
    await provider.settled();
    expect(readdirSync(tempRoot)).toEqual([]);
    expect(
      thrown(() => provider.confine(["true"], { mode: "read-only", workspaceRoot: workspace })).code,
    ).toBe("SANDBOX_UNAVAILABLE");
  });

  it("rejects bad argv, a missing workspace root and bad options, naming the field", () => {
    const rec: Recorder = { probes: 0, wraps: [] };
    const provider = new TrackedProvider({
      host: linuxHost,
      tempRoot,
      backends: ["bwrap"],
      registry: { bwrap: () => fakeBackend("bwrap", { available: true, enforcement: "full" }, rec) },
    });
    const policy: SandboxPolicy = { mode: "read-only", workspaceRoot: workspace };
    expect(thrown(() => provider.confine([], policy)).message).toBe(
      "argv must be a non-empty array naming the program to run (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md",
    );
    expect(thrown(() => provider.confine(["a", "b\0"], policy)).message).toBe(
      "argv[1] must be a string without NUL bytes (and argv[0] non-empty) (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md",
    );
    expect(
      thrown(() => provider.confine(["true"], { mode: "read-only", workspaceRoot: join(base, "nope") })),
    ).toEqual({
      name: "SandboxPolicyError",
      code: "SANDBOX_INVALID_POLICY",
      message:
        "policy.workspaceRoot cannot be canonicalised: the directory does not resolve (ENOENT) (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md",
    });
    writeFileSync(join(base, "file"), "");
    expect(
      thrown(() => provider.confine(["true"], { mode: "read-only", workspaceRoot: join(base, "file") }))
        .message,
    ).toBe(
      "policy.workspaceRoot must name a directory, but it resolves to a non-directory (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md",
    );
    const bad: [ConstructorParameters<typeof LocalSandboxProvider>[0], string][] = [
      [{ backends: [] }, "backends must be a non-empty array of backend names"],
      [
        { backends: ["docker" as LocalBackendName] },
        'backends[0] must be one of bwrap, landlock, landlock+bwrap, seatbelt, windows-acl, got "docker"',
      ],
      [{ backends: ["bwrap", "bwrap"] }, "backends must not name a backend twice"],
      [{ network: "off" as "deny" }, 'network must be "allow", "deny" or { allow: [host names] }'],
      [
        { protectedPaths: ["../x"] },
        'protectedPaths[0] must be a relative path inside the workspace (no "..")',
      ],
      [
        { protectedPaths: ["/etc"] },
        'protectedPaths[0] must be a relative path inside the workspace (no "..")',
      ],
      [{ tempRoot: "tmp" }, "tempRoot must be an absolute path"],
    ];
    for (const [options, message] of bad) {
      expect(thrown(() => new TrackedProvider(options)).message).toBe(
        `LocalSandboxProvider: ${message} (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md`,
      );
    }
  });

  it("a backend whose probe throws is reported unavailable, not fatal", () => {
    const provider = new TrackedProvider({
      host: linuxHost,
      backends: ["landlock"],
      registry: {
        landlock: () => ({
          name: "landlock",
          probe: () => {
            throw new Error("boom");
          },
          wrap: () => {
            throw new Error("unreachable");
          },
        }),
      },
    });
    expect(provider.probe()).toEqual([
      { backend: "landlock", available: false, reason: "its probe threw: boom" },
    ]);
  });

  it("defaults to the platform's backends", () => {
    expect([defaultBackendsFor("linux"), defaultBackendsFor("darwin"), defaultBackendsFor("win32")]).toEqual([
      ["bwrap", "landlock+bwrap", "landlock"],
      ["seatbelt"],
      ["windows-acl"],
    ]);
    expect(new TrackedProvider({ host: createFakeHost({ platform: "darwin" }) }).backends).toEqual([
      "seatbelt",
    ]);
  });
});

describe("policy extensions on backends that do not implement them", () => {
  it("fail closed instead of ignoring denyRead or writableRoots", () => {
    const recorder: Recorder = { probes: 0, wraps: [] };
    const provider = new TrackedProvider({
      backends: ["seatbelt"],
      registry: {
        seatbelt: () => fakeBackend("seatbelt", { available: true, enforcement: "full" }, recorder),
      },
    });
    writeFileSync(join(base, "secret"), "x");
    mkdirSync(join(base, "cache"));
    const attempt = (extra: Record<string, unknown>) => {
      try {
        provider.confine(["true"], {
          mode: "workspace-write",
          workspaceRoot: workspace,
          ...extra,
        } as SandboxPolicy);
        return "confined";
      } catch (error) {
        return (error as { code: string }).code;
      }
    };
    expect([
      attempt({ denyRead: [join(base, "secret")] }),
      attempt({ writableRoots: [join(base, "cache")] }),
      attempt({}),
    ]).toEqual(["SANDBOX_UNAVAILABLE", "SANDBOX_UNAVAILABLE", "confined"]);
    expect(recorder.wraps.length).toBe(1);
  });
});
