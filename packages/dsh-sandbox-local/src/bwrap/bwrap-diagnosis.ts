import type { LocalHost } from "../host/local-host.js";

/** First line that looks like bwrap's own diagnostic, else the first non-empty line. */
export function firstDiagnosticLine(stderr: string): string | undefined {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  return lines.find((line) => line.startsWith("bwrap:")) ?? lines[0];
}

function sysctl(host: LocalHost, path: string): string | undefined {
  return host.readText(path)?.trim();
}

function inContainer(host: LocalHost): boolean {
  if (host.exists("/.dockerenv") || host.exists("/run/.containerenv")) return true;
  if ((host.env("container") ?? "") !== "") return true;
  const cgroup = host.readText("/proc/1/cgroup") ?? "";
  return /docker|kubepods|containerd|lxc|libpod/.test(cgroup);
}

function kernelOlderThan(release: string, major: number, minor: number): boolean {
  const match = /^(\d+)\.(\d+)/.exec(release);
  if (match === null) return false;
  const [maj, min] = [Number(match[1]), Number(match[2])];
  return maj < major || (maj === major && min < minor);
}

/**
 * Explain, in words an operator can act on, why bwrap failed its probe here:
 * AppArmor's `kernel.apparmor_restrict_unprivileged_userns`, Debian's
 * `kernel.unprivileged_userns_clone`, `user.max_user_namespaces=0`, a
 * container that forbids namespaces, an old kernel, a masked `/proc`…
 */
export function explainBwrapFailure(stderr: string, host: LocalHost): string {
  const line = firstDiagnosticLine(stderr);
  const said = line === undefined ? "bwrap printed nothing" : `bwrap said: ${JSON.stringify(line)}`;
  if (/Unknown option/i.test(stderr)) {
    return `this bwrap is too old for the flags the sandbox needs; install bubblewrap 0.4 or newer (${said})`;
  }
  const namespaceTrouble = /namespace|uid map|gid map|setgroups|userns|Operation not permitted/i.test(stderr);
  if (namespaceTrouble) {
    if (sysctl(host, "/proc/sys/kernel/apparmor_restrict_unprivileged_userns") === "1" && host.uid !== 0) {
      return `AppArmor restricts unprivileged user namespaces (sysctl kernel.apparmor_restrict_unprivileged_userns=1): give bwrap an AppArmor profile that allows "userns", or set the sysctl to 0 (${said})`;
    }
    if (sysctl(host, "/proc/sys/kernel/unprivileged_userns_clone") === "0" && host.uid !== 0) {
      return `unprivileged user namespaces are disabled (sysctl kernel.unprivileged_userns_clone=0): set it to 1 (${said})`;
    }
    if (sysctl(host, "/proc/sys/user/max_user_namespaces") === "0") {
      return `user namespaces are disabled (sysctl user.max_user_namespaces=0): raise it above 0 (${said})`;
    }
    if (kernelOlderThan(host.kernelRelease, 3, 8)) {
      return `kernel ${host.kernelRelease} is too old for user namespaces (3.8+ needed) (${said})`;
    }
    if (inContainer(host)) {
      return `no user namespaces in this container: its seccomp profile or missing CAP_SYS_ADMIN forbids creating namespaces; allow unshare/clone namespaces for the container or use the landlock backend (${said})`;
    }
    return `the kernel refused to create the sandbox namespaces (${said})`;
  }
  if (/Can't mount proc/i.test(stderr)) {
    return `cannot mount a fresh /proc in the sandbox (typical in containers that mask /proc); run with an unmasked /proc or use the landlock backend (${said})`;
  }
  return `bwrap failed its self-test (${said})`;
}
