import { describe, expect, it } from "vitest";
import { createFakeHost } from "../../test/support/fake-host.js";
import type { HostRunResult } from "../host/local-host.js";
import { createBwrapBackend } from "./bwrap-backend.js";
import { explainBwrapFailure } from "./bwrap-diagnosis.js";

const OK_STATUS: HostRunResult = {
  status: 0,
  stdout: "CapEff:\t0000000000000000\nNoNewPrivs:\t1\n",
  stderr: "",
};
const VERSION: HostRunResult = { status: 0, stdout: "bubblewrap 0.8.0\n", stderr: "" };
const NS_FAIL: HostRunResult = {
  status: 1,
  stdout: "",
  stderr:
    "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.\n",
};

const LAUNCHER = "/opt/suaveplan/landlock-launcher";

function hostWith(
  answer: (args: readonly string[]) => HostRunResult,
  extra: Parameters<typeof createFakeHost>[0] = {},
) {
  return createFakeHost({
    executables: { bwrap: "/usr/bin/bwrap" },
    run: (_file, args) => (args[0] === "--version" ? VERSION : answer(args)),
    ...extra,
  });
}

describe("bwrap backend probe (host seam)", () => {
  it("reports why not on a non-Linux host, without running anything", () => {
    const host = createFakeHost({ platform: "darwin" });
    expect(createBwrapBackend({ host, launcherPath: LAUNCHER }).probe()).toEqual({
      backend: "bwrap",
      available: false,
      reason: "bubblewrap runs only on Linux; this host is darwin",
    });
    expect(host.calls).toEqual([]);
  });

  it("reports a missing binary", () => {
    expect(createBwrapBackend({ host: createFakeHost() }).probe()).toEqual({
      backend: "bwrap",
      available: false,
      reason: "bubblewrap is not installed: no executable `bwrap` on PATH (install the bubblewrap package)",
    });
  });

  it("refuses a bwrap too old for the flags it needs", () => {
    const host = createFakeHost({
      executables: { bwrap: "/usr/bin/bwrap" },
      run: () => ({ status: 0, stdout: "bubblewrap 0.3.3\n", stderr: "" }),
    });
    expect(createBwrapBackend({ host, launcherPath: LAUNCHER }).probe()).toEqual({
      backend: "bwrap",
      available: false,
      reason:
        "bwrap 0.3.3 is too old: 0.4.0 or newer is needed for --cap-drop, --die-with-parent and --new-session",
      facts: { bwrapVersion: "0.3.3" },
    });
  });

  it("runs one confined probe with a user namespace and the network cut when that works", () => {
    const host = hostWith(() => OK_STATUS);
    expect(createBwrapBackend({ host, launcherPath: LAUNCHER }).probe()).toEqual({
      backend: "bwrap",
      available: true,
      enforcement: "full",
      networkDeny: true,
      denyRead: true,
      pty: true,
      domainAllowList: "full",
      facts: {
        bwrapPath: "/usr/bin/bwrap",
        bwrapVersion: "0.8.0",
        userNamespace: true,
        disableUserns: true,
        callerIsRoot: false,
        socketFilter: LAUNCHER,
      },
    });
    expect(host.calls.map((c) => c.args.slice(0, 6))).toEqual([
      ["--version"],
      [
        "--unshare-user",
        "--disable-userns",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",
      ],
      ["--seccomp-only", "--sockets", "unix", "--", "true"],
    ]);
  });
  it("reports networkDeny false, and why, when the launcher's socket-family filter cannot run", () => {
    const host = hostWith((args) =>
      args[0] === "--seccomp-only"
        ? {
            status: 121,
            stdout: "",
            stderr: "landlock-launcher: installing the seccomp filter failed: EINVAL\n",
          }
        : OK_STATUS,
    );
    const probe = createBwrapBackend({ host, launcherPath: LAUNCHER }).probe();
    expect({ available: probe.available, networkDeny: probe.networkDeny, reason: probe.reason }).toEqual({
      available: true,
      networkDeny: false,
      reason:
        "network deny unavailable: the launcher's socket-family filter did not run (landlock-launcher: installing the seccomp filter failed: EINVAL)",
    });
  });

  it("falls back to no network namespace and reports networkDeny false", () => {
    const host = hostWith((args) =>
      args.includes("--unshare-net")
        ? { status: 1, stdout: "", stderr: "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted\n" }
        : OK_STATUS,
    );
    const probe = createBwrapBackend({ host, launcherPath: LAUNCHER }).probe();
    expect({ available: probe.available, networkDeny: probe.networkDeny }).toEqual({
      available: true,
      networkDeny: false,
    });
  });

  it("as root without user namespaces, falls back to privileged bwrap (caps still dropped)", () => {
    const host = hostWith((args) => (args.includes("--unshare-user") ? NS_FAIL : OK_STATUS), { uid: 0 });
    expect(createBwrapBackend({ host, launcherPath: LAUNCHER }).probe().facts).toEqual({
      bwrapPath: "/usr/bin/bwrap",
      bwrapVersion: "0.8.0",
      userNamespace: false,
      disableUserns: false,
      callerIsRoot: true,
      socketFilter: LAUNCHER,
    });
  });

  it("fails closed when the confined probe still holds capabilities", () => {
    const host = hostWith(() => ({
      status: 0,
      stdout: "CapEff:\t000001ffffffffff\nNoNewPrivs:\t1\n",
      stderr: "",
    }));
    expect(createBwrapBackend({ host, launcherPath: LAUNCHER }).probe()).toEqual({
      backend: "bwrap",
      available: false,
      reason:
        "the bwrap-confined probe kept privileges (CapEff 000001ffffffffff, NoNewPrivs 1); refusing a sandbox that does not drop them",
      facts: { bwrapVersion: "0.8.0" },
    });
  });

  it("names AppArmor's kernel.apparmor_restrict_unprivileged_userns when it blocks user namespaces", () => {
    const host = hostWith(() => NS_FAIL, {
      files: { "/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1\n" },
    });
    expect(createBwrapBackend({ host, launcherPath: LAUNCHER }).probe().reason).toBe(
      'AppArmor restricts unprivileged user namespaces (sysctl kernel.apparmor_restrict_unprivileged_userns=1): give bwrap an AppArmor profile that allows "userns", or set the sysctl to 0 (bwrap said: "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.")',
    );
  });

  it("names a container that forbids namespaces", () => {
    const host = hostWith(() => NS_FAIL, { files: { "/.dockerenv": "" } });
    expect(createBwrapBackend({ host, launcherPath: LAUNCHER }).probe().reason).toMatch(
      /^no user namespaces in this container: /,
    );
  });
});

describe("explainBwrapFailure", () => {
  const said = ' (bwrap said: "bwrap: setting up uid map: Permission denied")';
  const stderr = "bwrap: setting up uid map: Permission denied\n";
  it("distinguishes each reason a kernel refuses namespaces", () => {
    const cases: [Parameters<typeof createFakeHost>[0], string][] = [
      [
        { files: { "/proc/sys/kernel/unprivileged_userns_clone": "0" } },
        `unprivileged user namespaces are disabled (sysctl kernel.unprivileged_userns_clone=0): set it to 1${said}`,
      ],
      [
        { files: { "/proc/sys/user/max_user_namespaces": "0" } },
        `user namespaces are disabled (sysctl user.max_user_namespaces=0): raise it above 0${said}`,
      ],
      [{ kernelRelease: "3.2.0" }, `kernel 3.2.0 is too old for user namespaces (3.8+ needed)${said}`],
      [
        { files: { "/proc/1/cgroup": "0::/kubepods/besteffort/pod1" } },
        `no user namespaces in this container: its seccomp profile or missing CAP_SYS_ADMIN forbids creating namespaces; allow unshare/clone namespaces for the container or use the landlock backend${said}`,
      ],
      [{}, `the kernel refused to create the sandbox namespaces${said}`],
    ];
    for (const [host, reason] of cases)
      expect(explainBwrapFailure(stderr, createFakeHost(host))).toBe(reason);
  });

  it("explains a masked /proc, an unknown option and anything else", () => {
    const host = createFakeHost();
    expect(explainBwrapFailure("bwrap: Can't mount proc on /newroot/proc: Invalid argument", host)).toMatch(
      /^cannot mount a fresh \/proc/,
    );
    expect(explainBwrapFailure("bwrap: Unknown option --disable-userns", host)).toMatch(
      /^this bwrap is too old/,
    );
    expect(explainBwrapFailure("", host)).toBe("bwrap failed its self-test (bwrap printed nothing)");
  });
});

describe("bwrap backend wrap (host seam)", () => {
  const policy = {
    mode: "workspace-write",
    workspaceRoot: "/ws",
    tempDir: "/tmp/area",
    protectedPaths: ["/ws/.git/hooks"],
    network: "deny",
  } as const;

  it('masks the host\'s file-system UNIX sockets under network "deny", after every other bind', () => {
    const backend = createBwrapBackend({
      launcherPath: LAUNCHER,
      host: hostWith(() => OK_STATUS),
      hostUnixSockets: () => ["/run/docker.sock", "/ws/dev.sock"],
    });
    const argv = backend.wrap(["true"], policy, backend.probe()).argv;
    const end = argv.indexOf("--");
    // The protected path's read-only bind, one /dev/null mask per socket, then the socket-family filter.
    const filter = argv.indexOf(LAUNCHER);
    expect(argv.slice(filter - 9, filter + 6)).toEqual([
      "/ws/.git/hooks",
      "/ws/.git/hooks",
      "--ro-bind",
      "/dev/null",
      "/run/docker.sock",
      "--ro-bind",
      "/dev/null",
      "/ws/dev.sock",
      "--",
      LAUNCHER,
      "--seccomp-only",
      "--sockets",
      "unix",
      "--",
      "true",
    ]);
    expect(end).toBe(filter - 1);
  });

  it('leaves sockets alone under network "allow"', () => {
    let asked = false;
    const backend = createBwrapBackend({
      launcherPath: LAUNCHER,
      host: hostWith(() => OK_STATUS),
      hostUnixSockets: () => {
        asked = true;
        return ["/run/docker.sock"];
      },
    });
    const argv = backend.wrap(["true"], { ...policy, network: "allow" }, backend.probe()).argv;
    expect({ asked, masked: argv.includes("/run/docker.sock") }).toEqual({ asked: false, masked: false });
  });
});
