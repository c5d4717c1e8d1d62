// Adversarial escape tests for the landlock and landlock+bwrap backends: real
// Landlock, real bubblewrap, real processes, host-side assertions. Each test is
// named after its technique and asserts the outside file is unchanged.
import { type ChildProcess, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { BackendProbeResult, LocalBackend } from "../src/backend/index.js";
import { createLandlockBackend, createLayeredBackend } from "../src/landlock/index.js";
import {
  buildLauncherInto,
  createFixture,
  type Fixture,
  matchesDenial,
  policyFor,
  runConfined,
  SECRET_TEXT,
} from "./landlock-harness.js";

const buildDir = mkdtempSync(join(tmpdir(), "landlock-launcher-"));
let launcherPath = "";

beforeAll(() => {
  launcherPath = buildLauncherInto(buildDir);
});
afterAll(() => rmSync(buildDir, { recursive: true, force: true }));

const modes: {
  name: string;
  create: (launcher: string) => LocalBackend;
  /** Landlock has no rights for chmod/utimes/xattrs: plain landlock cannot freeze outside metadata under workspace-write. */
  metadataGapUnderWorkspaceWrite: boolean;
}[] = [
  {
    name: "landlock",
    create: (launcher) => createLandlockBackend({ launcherPath: launcher }),
    metadataGapUnderWorkspaceWrite: true,
  },
  {
    name: "landlock+bwrap",
    create: (launcher) => createLayeredBackend({ launcherPath: launcher }),
    metadataGapUnderWorkspaceWrite: false,
  },
];

describe.each(modes)("$name", ({ create, metadataGapUnderWorkspaceWrite }) => {
  let backend: LocalBackend;
  let probe: BackendProbeResult;
  let fx: Fixture;
  const hostChildren: ChildProcess[] = [];

  beforeAll(() => {
    backend = create(launcherPath);
    probe = backend.probe();
  });
  beforeEach(() => {
    fx = createFixture();
  });
  afterEach(() => {
    for (const child of hostChildren.splice(0)) child.kill("SIGKILL");
    fx.dispose();
  });

  /** The outside directory holds exactly the untouched secret. */
  function expectOutsideUnchanged(): void {
    expect(readFileSync(fx.secret, "utf8")).toBe(SECRET_TEXT);
    expect(readdirSync(fx.outside)).toEqual(["secret.txt"]);
  }

  function attack(script: string, extraEnv: Record<string, string> = {}) {
    return runConfined(backend, probe, policyFor(fx), script, {
      OUT: fx.secret,
      OUTDIR: fx.outside,
      ...extraEnv,
    });
  }

  /** A host process (not confined) whose cwd is the outside directory. */
  function hostSleeper(): ChildProcess {
    const child = spawn("sleep", ["60"], { cwd: fx.outside, stdio: "ignore" });
    hostChildren.push(child);
    return child;
  }

  it("reports full enforcement for read-only, and for workspace-write unless metadata is a known gap", () => {
    expect.assertions(3);
    expect(probe.available).toBe(true);
    expect(backend.wrap(["true"], policyFor(fx, { mode: "read-only" }), probe).enforcement).toBe("full");
    expect(backend.wrap(["true"], policyFor(fx), probe).enforcement).toBe(
      metadataGapUnderWorkspaceWrite ? "partial" : "full",
    );
  });

  /** Mode, owner and timestamps of the outside file and directory. */
  function outsideMetadata(): unknown {
    return [fx.secret, fx.outside].map((p) => {
      const st = statSync(p);
      return { mode: st.mode, uid: st.uid, gid: st.gid, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
    });
  }
  const METADATA_ATTACK =
    'chmod 777 "$OUT"; chmod 700 "$OUTDIR"; chgrp 1 "$OUT"; touch -d 2001-01-01 "$OUT"; touch "$OUTDIR"; chattr +A "$OUT"; exit 0';

  it("attack: chmod, chgrp, touch and chattr an outside file under read-only", async () => {
    expect.assertions(4);
    const before = outsideMetadata();
    const result = await runConfined(backend, probe, policyFor(fx, { mode: "read-only" }), METADATA_ATTACK, {
      OUT: fx.secret,
      OUTDIR: fx.outside,
    });
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expect(outsideMetadata()).toEqual(before);
    expectOutsideUnchanged();
  });

  it.skipIf(metadataGapUnderWorkspaceWrite)(
    "attack: chmod, chgrp, touch and chattr an outside file under workspace-write",
    async () => {
      expect.assertions(3);
      const before = outsideMetadata();
      await attack(METADATA_ATTACK);
      expect(outsideMetadata()).toEqual(before);
      expectOutsideUnchanged();
    },
  );

  it.runIf(metadataGapUnderWorkspaceWrite)(
    "known gap: outside metadata under workspace-write is reported as partial enforcement",
    async () => {
      expect.assertions(2);
      const result = await attack('chmod 600 "$OUT"');
      // Landlock has no chmod right: the change lands, and the backend says so instead of claiming full.
      expect(result.confined.enforcement).toBe("partial");
      expect(statSync(fx.secret).mode & 0o777).toBe(0o600);
    },
  );

  it("confined process holds no capability and has no_new_privs", async () => {
    expect.assertions(2);
    const result = await attack(
      "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status",
    );
    expect(result.code).toBe(0);
    expect(result.stdout.replace(/[ \t]+/g, " ")).toBe(
      [
        "CapInh: 0000000000000000",
        "CapPrm: 0000000000000000",
        "CapEff: 0000000000000000",
        "CapBnd: 0000000000000000",
        "CapAmb: 0000000000000000",
        "NoNewPrivs: 1",
        "",
      ].join("\n"),
    );
  });

  it("reads outside the workspace work", async () => {
    expect.assertions(2);
    const result = await attack('cat "$OUT"');
    expect(result).toMatchObject({ code: 0, stdout: SECRET_TEXT });
    expect(readFileSync(fx.secret, "utf8")).toBe(SECRET_TEXT);
  });

  it("/dev/null works as a sink under read-only", async () => {
    expect.assertions(1);
    const result = await runConfined(
      backend,
      probe,
      policyFor(fx, { mode: "read-only" }),
      "echo sink > /dev/null && cat /dev/null && echo ok",
    );
    expect(result).toMatchObject({ code: 0, stdout: "ok\n", stderr: "" });
  });

  it("workspace and temp area are writable under workspace-write", async () => {
    expect.assertions(3);
    const result = await attack(
      'echo ws > inside.txt && mkdir -p d/e && mv inside.txt d/e/ && echo tmp > "$TMPDIR/t.txt"',
    );
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(readFileSync(join(fx.workspace, "d", "e", "inside.txt"), "utf8")).toBe("ws\n");
    expect(readFileSync(join(fx.tempDir, "t.txt"), "utf8")).toBe("tmp\n");
  });

  it("workspace writes are refused under read-only", async () => {
    expect.assertions(3);
    const result = await runConfined(
      backend,
      probe,
      policyFor(fx, { mode: "read-only" }),
      "echo ws > inside.txt",
    );
    expect(result.code).not.toBe(0);
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expect(readdirSync(fx.workspace)).toEqual([]);
  });

  it("attack: write to an outside file", async () => {
    expect.assertions(4);
    const result = await attack('echo pwned > "$OUT"');
    expect(result.code).not.toBe(0);
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expectOutsideUnchanged();
  });

  it("attack: create a new file outside", async () => {
    expect.assertions(3);
    const result = await attack(
      'echo pwned > "$OUTDIR/new.txt"; mkdir "$OUTDIR/newdir"; mkfifo "$OUTDIR/fifo"',
    );
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expectOutsideUnchanged();
  });

  it("attack: truncate an outside file (truncate(2) and O_TRUNC)", async () => {
    expect.assertions(3);
    const result = await attack('truncate -s 0 "$OUT"; : > "$OUT"; exit 0');
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expectOutsideUnchanged();
  });

  it("attack: write through a symlink from the workspace to outside", async () => {
    expect.assertions(4);
    const result = await attack('ln -s "$OUT" link.txt && echo pwned > link.txt');
    expect(result.code).not.toBe(0);
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expectOutsideUnchanged();
  });

  it("attack: cd through a workspace symlink to outside and write", async () => {
    expect.assertions(4);
    const result = await attack(
      'ln -s "$OUTDIR" door && cd door && echo pwned > secret.txt && echo pwned > fresh.txt',
    );
    expect(result.code).not.toBe(0);
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expectOutsideUnchanged();
  });

  it("attack: hard link an outside file into the workspace, then write the link", async () => {
    expect.assertions(5);
    const result = await attack('ln "$OUT" hard.txt && echo pwned > hard.txt');
    expect(result.code).not.toBe(0);
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expectOutsideUnchanged();
    expect(existsSync(join(fx.workspace, "hard.txt"))).toBe(false);
  });

  it("attack: rename an outside file into the workspace", async () => {
    expect.assertions(3);
    // mv falls back to copy + unlink on EXDEV: the copy is a permitted read, the unlink is refused.
    const result = await attack('mv "$OUT" stolen.txt; echo pwned > stolen.txt; exit 1');
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expectOutsideUnchanged();
  });

  it("attack: rename a workspace directory out of the workspace", async () => {
    expect.assertions(4);
    mkdirSync(join(fx.workspace, "payload"));
    writeFileSync(join(fx.workspace, "payload", "p.txt"), "payload\n");
    const result = await attack('mv payload "$OUTDIR/payload"');
    expect(result.code).not.toBe(0);
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expectOutsideUnchanged();
  });

  it("attack: replace an outside file by renaming a workspace file over it", async () => {
    expect.assertions(4);
    writeFileSync(join(fx.workspace, "evil.txt"), "pwned\n");
    const result = await attack('mv -f evil.txt "$OUT"');
    expect(result.code).not.toBe(0);
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expectOutsideUnchanged();
  });

  it("attack: write through /proc/self/root", async () => {
    expect.assertions(4);
    const result = await attack('echo pwned > "/proc/self/root$OUT"');
    expect(result.code).not.toBe(0);
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expectOutsideUnchanged();
  });

  it("attack: write through /proc/<outside pid>/cwd", async () => {
    expect.assertions(3);
    const sleeper = hostSleeper();
    const result = await attack(
      'echo pwned > "/proc/$VICTIM/cwd/secret.txt"; echo pwned > "/proc/$VICTIM/cwd/new.txt"',
      {
        VICTIM: String(sleeper.pid),
      },
    );
    expect(result.code).not.toBe(0);
    expectOutsideUnchanged();
  });

  it("attack: write through .. path traversal", async () => {
    expect.assertions(4);
    const result = await attack('echo pwned > "../outside/secret.txt"');
    expect(result.code).not.toBe(0);
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expectOutsideUnchanged();
  });

  it("attack: remove an outside file", async () => {
    expect.assertions(4);
    const result = await attack('rm -f "$OUT"');
    expect(result.code).not.toBe(0);
    expect(matchesDenial(result.confined.denialSignatures, result.stderr)).toBe(true);
    expectOutsideUnchanged();
  });

  it("attack: write host /dev/shm", async () => {
    expect.assertions(2);
    const name = `landlock-escape-${process.pid}-${Date.now()}`;
    const result = await attack(`echo pwned > /dev/shm/${name}`);
    expect(result.code).not.toBe(0);
    expect(existsSync(join("/dev/shm", name))).toBe(false);
  });

  it("attack: mount -o remount,rw / (capabilities dropped)", async () => {
    expect.assertions(4);
    const mountsBefore = readFileSync("/proc/self/mountinfo", "utf8");
    const result = await attack('mount -o remount,rw / && echo pwned > "$OUT"');
    expect(result.code).not.toBe(0);
    expect(readFileSync("/proc/self/mountinfo", "utf8")).toBe(mountsBefore);
    expectOutsideUnchanged();
  });

  it("attack: unshare -Urm then remount, and a fresh user namespace (Landlock survives)", async () => {
    expect.assertions(4);
    const result = await attack(
      "unshare -Urm sh -c 'mount -o remount,rw / ; echo pwned > \"$OUT\"'; unshare -U sh -c 'echo entered-userns; echo pwned > \"$OUT\"'",
    );
    // The user namespace is really entered; the write inside it is still refused.
    expect(result.stdout).toBe("entered-userns\n");
    expect(result.code).not.toBe(0);
    expectOutsideUnchanged();
  });

  it("attack: signal a host process outside the sandbox", async () => {
    expect.assertions(2);
    const sleeper = hostSleeper();
    const result = await attack('kill -KILL "$VICTIM"', { VICTIM: String(sleeper.pid) });
    expect(result.code).not.toBe(0);
    expect(sleeper.exitCode === null && sleeper.signalCode === null).toBe(true);
  });
});
