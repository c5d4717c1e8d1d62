/**
 * The reusable file-escape suite for local sandbox backends.
 *
 * Every technique runs, in each confining mode, as `/bin/sh -c <attack>`
 * confined by the provider under test, then checks ON THE HOST that nothing
 * outside the workspace (and no protected sub-path inside it) changed. Each
 * attack script ends by printing {@link ATTEMPTED}, so a sandbox that failed to
 * start cannot pass vacuously (the attack runs in a subshell, so a shell that
 * exits on a failed redirection still reaches the marker). A control block runs the same attacks
 * unconfined and asserts they DO change the host, proving each script bites —
 * so every attack must touch ONLY the per-test layout (never e.g. every
 * process's cwd), or the control run would damage the host.
 *
 * Usage (any backend):
 *
 * ```ts
 * describeEscapeSuite({
 *   name: "landlock",
 *   createProvider: () => new LocalSandboxProvider({ backends: ["landlock"] }),
 *   knownGaps: { "umount-protected-bind": "…" },
 * });
 * ```
 */
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type ConfinedSandboxMode,
  classifyConfinedRun,
  type SandboxPolicy,
  type SandboxProvider,
} from "@suaveplan/dsh-sandbox";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import {
  createEscapeLayout,
  type EscapeLayout,
  SECRET_TEXT,
  SHM_TEXT,
  sh,
  snapshotTree,
  startHostProcess,
  type TreeEntry,
} from "./escape-layout.js";
import { runConfined, runUnconfined } from "./run-confined.js";

/** Printed by every attack script as its last act: proof the script ran inside the sandbox. */
export const ATTEMPTED = "suaveplan-escape-attempted";

/** Context handed to an attack script builder. */
export interface AttackContext {
  layout: EscapeLayout;
  /** Pid of a host process whose cwd is `layout.outside`. */
  hostPid: number;
}

/** One escape technique: a named attack plus optional extra host-side checks. */
export interface EscapeTechnique {
  /** Stable id; the test is named `<id>: <title>`. */
  id: EscapeTechniqueId;
  /** What the attack tries. */
  title: string;
  /** The attack, as a POSIX shell script (the suite appends the ATTEMPTED marker). */
  script(ctx: AttackContext): string;
  /** Targets the protected sub-paths (`.git/hooks`, `.git/config`) rather than files outside. */
  targetsProtectedPaths?: boolean;
  /** Skip the unconfined control run (the attack would touch real host state, e.g. remount /). */
  noControl?: boolean;
  /** Extra host-side assertions after the confined run; returns how many `expect` calls it made. */
  verify?(layout: EscapeLayout): number;
}

/** Ids of the built-in techniques. */
export type EscapeTechniqueId =
  | "write-outside-file"
  | "truncate-outside-file"
  | "create-outside-entries"
  | "chmod-chown-touch-outside-file"
  | "remove-outside-entries"
  | "symlink-in-workspace-to-outside"
  | "cd-through-workspace-symlink"
  | "symlink-created-in-sandbox"
  | "hardlink-new-of-outside-file"
  | "rename-outside-file-into-workspace"
  | "rename-workspace-dir-out"
  | "proc-self-root-path"
  | "proc-outside-pid-cwd"
  | "dotdot-path-traversal"
  | "write-host-dev-shm"
  | "remount-root-rw"
  | "unshare-userns-then-remount"
  | "umount-protected-bind"
  | "write-protected-paths"
  | "rename-protected-parent";

/** The attack list, reusable by every backend's suite. */
export const ESCAPE_TECHNIQUES: readonly EscapeTechnique[] = [
  {
    id: "write-outside-file",
    title: "overwriting and appending to a file outside the workspace changes nothing",
    script: ({ layout: l }) => `echo pwned > ${sh(l.secret)}; echo pwned >> ${sh(l.secret)}`,
  },
  {
    id: "truncate-outside-file",
    title: "truncating a file outside the workspace changes nothing",
    script: ({ layout: l }) => `true > ${sh(l.secret)}; truncate -s 0 ${sh(l.secret)}`,
  },
  {
    id: "create-outside-entries",
    title: "creating a file, directory and fifo outside the workspace changes nothing",
    script: ({ layout: l }) =>
      `echo pwned > ${sh(join(l.outside, "new.txt"))}; mkdir ${sh(join(l.outside, "newdir"))}; mkfifo ${sh(join(l.outside, "fifo"))}`,
  },
  {
    id: "chmod-chown-touch-outside-file",
    title: "chmod, chown and touch on an outside file change nothing",
    script: ({ layout: l }) =>
      `chmod 777 ${sh(l.secret)}; chown 1:1 ${sh(l.secret)}; touch -d 2001-01-01 ${sh(l.secret)}; touch ${sh(l.outsideDir)}`,
  },
  {
    id: "remove-outside-entries",
    title: "removing an outside file and directory changes nothing",
    script: ({ layout: l }) => `rm -f ${sh(l.secret)}; rmdir ${sh(l.outsideDir)}; rm -rf ${sh(l.outside)}`,
  },
  {
    id: "symlink-in-workspace-to-outside",
    title: "writing through a workspace symlink that points outside changes nothing",
    script: ({ layout: l }) =>
      `echo pwned > ${sh(join(l.linkOut, "secret.txt"))}; echo pwned > ${sh(join(l.linkOut, "new.txt"))}`,
  },
  {
    id: "cd-through-workspace-symlink",
    title: "cd through a workspace symlink to outside, then writing relative paths, changes nothing",
    script: ({ layout: l }) =>
      `cd ${sh(l.linkOut)} && { echo pwned > secret.txt; echo pwned > new.txt; rm -f secret.txt; }`,
  },
  {
    id: "symlink-created-in-sandbox",
    title: "a symlink the confined process creates to outside cannot be written through",
    script: ({ layout: l }) =>
      `ln -s ${sh(l.outside)} ${sh(join(l.workspace, "made-link"))}; echo pwned > ${sh(join(l.workspace, "made-link", "secret.txt"))}`,
  },
  {
    id: "hardlink-new-of-outside-file",
    title: "a new hard link of an outside file cannot be made or written through",
    script: ({ layout: l }) =>
      `ln ${sh(l.secret)} ${sh(join(l.workspace, "hard"))}; echo pwned >> ${sh(join(l.workspace, "hard"))}`,
  },
  {
    id: "rename-outside-file-into-workspace",
    title: "renaming an outside file into the workspace changes nothing outside",
    script: ({ layout: l }) =>
      `mv ${sh(l.secret)} ${sh(join(l.workspace, "stolen"))}; mv ${sh(l.outsideDir)} ${sh(join(l.workspace, "stolen-dir"))}`,
  },
  {
    id: "rename-workspace-dir-out",
    title: "renaming a workspace directory out of the workspace changes nothing outside",
    script: ({ layout: l }) =>
      `mv ${sh(join(l.workspace, "sub"))} ${sh(join(l.outside, "sub"))}; mv ${sh(join(l.workspace, "sub"))} ${sh(join(l.outsideDir, "sub"))}`,
  },
  {
    id: "proc-self-root-path",
    title: "writing via /proc/self/root/... changes nothing",
    script: ({ layout: l }) =>
      `echo pwned > /proc/self/root${sh(l.secret)}; echo pwned > /proc/self/root${sh(join(l.outside, "new.txt"))}`,
  },
  {
    id: "proc-outside-pid-cwd",
    title: "writing via /proc/<outside pid>/cwd and /root changes nothing",
    script: ({ layout: l, hostPid }) =>
      `echo pwned > /proc/${hostPid}/cwd/secret.txt; echo pwned > /proc/${hostPid}/cwd/new.txt; echo pwned > /proc/${hostPid}/root${sh(l.secret)}`,
  },
  {
    id: "dotdot-path-traversal",
    title: "writing through .. paths from the workspace changes nothing",
    script: ({ layout: l }) =>
      `cd ${sh(l.workspace)} && echo pwned > ../outside/secret.txt; echo pwned > ${sh(`${l.workspace}/sub/../../outside/new.txt`)}; echo pwned > ${sh(`${l.workspace}/../outside/secret.txt`)}`,
  },
  {
    id: "write-host-dev-shm",
    title: "writing host /dev/shm changes nothing on the host",
    script: ({ layout: l }) => `echo pwned > ${sh(l.shmFile)}; echo pwned > ${sh(l.shmNew)}`,
    verify: (l) => {
      expect(existsSync(l.shmFile) ? readFileSync(l.shmFile, "utf8") : "missing").toBe(SHM_TEXT);
      expect(existsSync(l.shmNew)).toBe(false);
      return 2;
    },
  },
  {
    id: "remount-root-rw",
    title: "mount -o remount,rw / (and of the mount holding the outside dir) then writing changes nothing",
    noControl: true,
    script: ({ layout: l }) =>
      `mount -o remount,rw /; mount -o remount,bind,rw /; t=$(df -P ${sh(l.outside)} | awk 'NR==2 {print $6}'); mount -o remount,bind,rw "$t"; mount -o remount,rw "$t"; echo pwned > ${sh(l.secret)}`,
  },
  {
    id: "unshare-userns-then-remount",
    title: "unshare -Urm, then remount rw and write, changes nothing",
    noControl: true,
    script: ({ layout: l }) =>
      `unshare -Urm sh -c ${sh(`mount -o remount,rw /; mount -o remount,rw,bind / /; mount -t tmpfs none ${sh(l.hooks)}; umount -l ${sh(l.hooks)}; echo pwned > ${sh(l.secret)}; echo evil > ${sh(l.hook)}`)}; unshare -m sh -c ${sh(`mount -o remount,rw /; echo pwned > ${sh(l.secret)}`)}`,
  },
  {
    id: "umount-protected-bind",
    title: "unmounting a protected bind, then writing the protected path, changes nothing",
    targetsProtectedPaths: true,
    script: ({ layout: l }) =>
      `umount ${sh(l.hooks)}; umount -l ${sh(l.hooks)}; umount -l ${sh(l.gitConfig)}; umount -l ${sh(l.gitDir)}; echo evil > ${sh(l.hook)}; echo evil >> ${sh(l.gitConfig)}`,
  },
  {
    id: "write-protected-paths",
    title: "writing, creating, chmod-ing and removing protected .git/hooks and .git/config changes nothing",
    targetsProtectedPaths: true,
    script: ({ layout: l }) =>
      `echo evil > ${sh(l.hook)}; chmod 777 ${sh(l.hook)}; echo evil > ${sh(join(l.hooks, "post-checkout"))}; echo evil >> ${sh(l.gitConfig)}; rm -f ${sh(l.gitConfig)}; rm -rf ${sh(l.hooks)}`,
  },
  // Regression (found while building the bwrap backend): with only the
  // protected paths re-bound read-only, `mv .git .git-moved` carried the binds
  // away and a freshly planted `.git/hooks/pre-commit` landed on the host. The
  // bwrap backend now binds each parent of a protected path onto itself.
  {
    id: "rename-protected-parent",
    title:
      "renaming .git (the protected paths' parent) or a protected path and planting a new one changes nothing",
    targetsProtectedPaths: true,
    script: ({ layout: l }) =>
      `mv ${sh(l.hooks)} ${sh(join(l.gitDir, "hooks-moved"))}; mv ${sh(l.gitConfig)} ${sh(join(l.gitDir, "config-moved"))}; mv ${sh(l.gitDir)} ${sh(join(l.workspace, ".git-moved"))} && mkdir -p ${sh(l.hooks)} && echo evil > ${sh(l.hook)} && echo evil > ${sh(l.gitConfig)}`,
  },
];

/** What the suite runs against. */
export interface EscapeSuiteTarget {
  /** Shown in describe names, e.g. `"bwrap"`. */
  name: string;
  /** Build the provider under test (once per mode block, in `beforeAll`). It must protect `.git/hooks` and `.git/config` by default. */
  createProvider(): SandboxProvider;
  /** Release a provider built by {@link createProvider} (`afterAll`). */
  disposeProvider?(provider: SandboxProvider): void;
  /** Skip everything with this reason (the backend cannot run here). */
  skip?: string | false | undefined;
  /** Modes to attack (default both confining modes). */
  modes?: readonly ConfinedSandboxMode[];
  /** Techniques this backend cannot close, with the reason; they are skipped and the reason shows in the test name. */
  knownGaps?: Partial<Record<EscapeTechniqueId, string>>;
  /** Run the unconfined control block (default true; one backend's suite per package is enough). */
  controls?: boolean;
}

interface HostState {
  outside: TreeEntry[];
  gitDirIno: number;
  hooks: TreeEntry[];
  gitConfig: TreeEntry[];
  workspace?: TreeEntry[];
}

function hostState(l: EscapeLayout, includeWorkspace: boolean): HostState {
  const state: HostState = {
    outside: snapshotTree(l.outside),
    gitDirIno: lstatSync(l.gitDir).ino,
    hooks: snapshotTree(l.hooks),
    gitConfig: snapshotTree(l.gitConfig),
  };
  if (includeWorkspace) state.workspace = snapshotTree(l.workspace);
  return state;
}

function safeHostState(l: EscapeLayout): unknown {
  try {
    return hostState(l, false);
  } catch (error) {
    return { missing: (error as NodeJS.ErrnoException).code };
  }
}

/** Register the escape suite (and its baseline behaviour checks) for `target`. */
export function describeEscapeSuite(target: EscapeSuiteTarget): void {
  const modes = target.modes ?? (["read-only", "workspace-write"] as const);
  for (const mode of modes) {
    describe.skipIf(Boolean(target.skip))(`${target.name} escapes (${mode})`, () => {
      let provider: SandboxProvider;
      beforeAll(() => {
        provider = target.createProvider();
      });
      afterAll(() => {
        if (provider !== undefined) target.disposeProvider?.(provider);
      });
      const layoutFor = (): EscapeLayout => {
        const layout = createEscapeLayout();
        onTestFinished(() => layout.cleanup());
        return layout;
      };
      const policyFor = (l: EscapeLayout): SandboxPolicy => ({ mode, workspaceRoot: l.workspace });

      describeBaseline(target.name, mode, () => provider, layoutFor, policyFor);

      for (const technique of ESCAPE_TECHNIQUES) {
        const gap = target.knownGaps?.[technique.id];
        const name = `${technique.id}: ${technique.title}`;
        if (gap !== undefined) {
          it.skip(`${name} — known gap: ${gap}`, () => {});
          continue;
        }
        it(name, async () => {
          const l = layoutFor();
          const host = startHostProcess(l.outside);
          onTestFinished(() => host.stop());
          const before = hostState(l, mode === "read-only");
          const script = `(\n${technique.script({ layout: l, hostPid: host.pid })}\n)\necho ${ATTEMPTED}`;
          const run = await runConfined(provider, script, policyFor(l));
          let counted = 3;
          expect(run.stdout).toContain(ATTEMPTED);
          const after = hostState(l, mode === "read-only");
          expect(after.outside).toEqual(before.outside);
          expect({ gitDirIno: after.gitDirIno, hooks: after.hooks, gitConfig: after.gitConfig }).toEqual({
            gitDirIno: before.gitDirIno,
            hooks: before.hooks,
            gitConfig: before.gitConfig,
          });
          if (mode === "read-only") {
            counted++;
            expect(after.workspace).toEqual(before.workspace);
          }
          counted += technique.verify?.(l) ?? 0;
          expect.assertions(counted);
        });
      }
    });
  }

  if (target.controls !== false) {
    describe.skipIf(Boolean(target.skip))(
      `${target.name} escape controls: the same attacks unconfined DO change the host`,
      () => {
        for (const technique of ESCAPE_TECHNIQUES) {
          if (technique.noControl) continue;
          it(`control ${technique.id}`, async () => {
            expect.assertions(2);
            const l = createEscapeLayout("suaveplan-control-");
            onTestFinished(() => l.cleanup());
            const host = startHostProcess(l.outside);
            onTestFinished(() => host.stop());
            const before = {
              state: safeHostState(l),
              shm: readFileSync(l.shmFile, "utf8"),
              shmNew: existsSync(l.shmNew),
            };
            const run = await runUnconfined(
              `(\n${technique.script({ layout: l, hostPid: host.pid })}\n)\necho ${ATTEMPTED}`,
              l.workspace,
            );
            expect(run.stdout).toContain(ATTEMPTED);
            const after = {
              state: safeHostState(l),
              shm: readFileSync(l.shmFile, "utf8"),
              shmNew: existsSync(l.shmNew),
            };
            expect(after).not.toEqual(before);
          });
        }
      },
    );
  }
}

function describeBaseline(
  name: string,
  mode: ConfinedSandboxMode,
  provider: () => SandboxProvider,
  layoutFor: () => EscapeLayout,
  policyFor: (l: EscapeLayout) => SandboxPolicy,
): void {
  it(`${name} (${mode}): the confined process has CapEff 0000000000000000 and NoNewPrivs 1, also when the caller is root`, async () => {
    const l = layoutFor();
    const run = await runConfined(
      provider(),
      "grep -E '^(CapEff|NoNewPrivs):' /proc/self/status",
      policyFor(l),
    );
    expect({ exitCode: run.exitCode, stdout: run.stdout }).toEqual({
      exitCode: 0,
      stdout: "CapEff:\t0000000000000000\nNoNewPrivs:\t1\n",
    });
  });

  it(`${name} (${mode}): reads inside and outside the workspace work`, async () => {
    const l = layoutFor();
    const run = await runConfined(
      provider(),
      `cat ${sh(l.secret)} ${sh(join(l.workspace, "sub", "file.txt"))}`,
      policyFor(l),
    );
    expect({ exitCode: run.exitCode, stdout: run.stdout }).toEqual({
      exitCode: 0,
      stdout: `${SECRET_TEXT}workspace file\n`,
    });
  });

  it(`${name} (${mode}): /dev/null is writable`, async () => {
    const l = layoutFor();
    const run = await runConfined(provider(), "echo x > /dev/null && echo sunk", policyFor(l));
    expect({ exitCode: run.exitCode, stdout: run.stdout, stderr: run.stderr }).toEqual({
      exitCode: 0,
      stdout: "sunk\n",
      stderr: "",
    });
  });

  it(`${name} (${mode}): echo x > /etc/x exits non-zero, classifies as denied and creates nothing`, async () => {
    const l = layoutFor();
    const target = `/etc/suaveplan-escape-${l.root.slice(-8)}`;
    const run = await runConfined(provider(), `echo x > ${sh(target)}`, policyFor(l));
    expect(run.exitCode).not.toBe(0);
    expect(classifyConfinedRun(run, run.confined).outcome).toBe("denied");
    expect(existsSync(target)).toBe(false);
  });

  if (mode === "workspace-write") {
    it(`${name} (${mode}): workspace writes are allowed and land on the host`, async () => {
      const l = layoutFor();
      const run = await runConfined(
        provider(),
        `echo written > ${sh(join(l.workspace, "new.txt"))} && mkdir ${sh(join(l.workspace, "d"))} && mv ${sh(join(l.workspace, "new.txt"))} ${sh(join(l.workspace, "d", "moved.txt"))}`,
        policyFor(l),
      );
      expect(run.exitCode).toBe(0);
      expect(readFileSync(join(l.workspace, "d", "moved.txt"), "utf8")).toBe("written\n");
    });

    it(`${name} (${mode}): a private writable temp area is exported as TMPDIR and removed after dispose`, async () => {
      const l = layoutFor();
      const run = await runConfined(
        provider(),
        'echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && printf %s "$TMPDIR"',
        policyFor(l),
      );
      const tmp = run.confined.env?.TMPDIR;
      expect(typeof tmp).toBe("string");
      expect({ exitCode: run.exitCode, stdout: run.stdout }).toEqual({ exitCode: 0, stdout: `t\n${tmp}` });
      expect(tmp?.startsWith(`${l.workspace}/`)).toBe(false);
      // the provider removes a used temp area in the background: poll, bounded
      await vi.waitFor(() => expect(existsSync(tmp ?? "/nonexistent")).toBe(false), { timeout: 10_000 });
    });

    it(`${name} (${mode}): a workspace given through a symlink is canonicalised`, async () => {
      const l = layoutFor();
      const run = await runConfined(
        provider(),
        `echo a > ${sh(join(l.workspaceLink, "via-link.txt"))} && echo b > ${sh(join(l.workspace, "via-real.txt"))}`,
        { mode, workspaceRoot: l.workspaceLink },
        { cwd: l.workspace },
      );
      expect(run.exitCode).toBe(0);
      expect([
        readFileSync(join(l.workspace, "via-link.txt"), "utf8"),
        readFileSync(join(l.workspace, "via-real.txt"), "utf8"),
      ]).toEqual(["a\n", "b\n"]);
    });
  } else {
    it(`${name} (${mode}): workspace writes are denied and classified as denied`, async () => {
      const l = layoutFor();
      const before = snapshotTree(l.workspace);
      const run = await runConfined(
        provider(),
        `echo written > ${sh(join(l.workspace, "new.txt"))}`,
        policyFor(l),
      );
      expect(run.exitCode).not.toBe(0);
      expect(classifyConfinedRun(run, run.confined).outcome).toBe("denied");
      expect(snapshotTree(l.workspace)).toEqual(before);
      expect(run.confined.env?.TMPDIR).toBeUndefined();
    });
  }

  it(`${name} (${mode}): parallel confined runs don't interfere`, async () => {
    const layouts = [layoutFor(), layoutFor(), layoutFor(), layoutFor()];
    const runs = await Promise.all(
      layouts.map((l, i) => {
        const other = layouts[(i + 1) % layouts.length] as EscapeLayout;
        const script = `echo ${i} > ${sh(join(l.workspace, "id.txt"))}; echo intruder > ${sh(join(other.workspace, "intruder.txt"))}; cat ${sh(join(l.workspace, "id.txt"))} 2>/dev/null; echo done-${i}`;
        return runConfined(provider(), script, policyFor(l));
      }),
    );
    const expected = layouts.map((_, i) => ({
      stdout: mode === "workspace-write" ? `${i}\ndone-${i}\n` : `done-${i}\n`,
      id: mode === "workspace-write" ? `${i}\n` : "absent",
      intruder: false,
    }));
    const actual = layouts.map((l, i) => ({
      stdout: runs[i]?.stdout,
      id: existsSync(join(l.workspace, "id.txt"))
        ? readFileSync(join(l.workspace, "id.txt"), "utf8")
        : "absent",
      intruder: existsSync(join(l.workspace, "intruder.txt")),
    }));
    expect(actual).toEqual(expected);
  });
}
