import type { RunnerFailureRule } from "@suaveplan/dsh-sandbox";

/**
 * Stderr text of a file effect that bwrap's read-only binds refused: `EROFS`
 * for writes, `EXDEV` for links and renames across the bind boundaries.
 */
export const BWRAP_DENIAL_SIGNATURES: readonly string[] = Object.freeze([
  "Read-only file system",
  "Invalid cross-device link",
]);

/**
 * Extra denial text when the caller is root: `--cap-drop ALL` removes
 * `CAP_DAC_OVERRIDE`/`CAP_SYS_ADMIN`/`CAP_CHOWN`, so `EACCES`/`EPERM` there are
 * sandbox effects (an unprivileged caller would see them without any sandbox,
 * so they are not claimed then).
 */
export const BWRAP_ROOT_DENIAL_SIGNATURES: readonly string[] = Object.freeze([
  "Permission denied",
  "Operation not permitted",
]);

/**
 * bwrap's own fatal diagnostics (it prints `bwrap: <message>` and exits 1
 * before running the command). Any of these on one stderr line with exit code
 * 1 is a runner failure, not a task failure.
 */
export const BWRAP_RUNNER_FAILURE_RULES: readonly RunnerFailureRule[] = Object.freeze([
  Object.freeze({
    allowedExitCodes: Object.freeze([1]),
    fatalSignatures: Object.freeze([
      "bwrap: No permissions to create a new namespace",
      "bwrap: No permissions to create new namespace",
      "bwrap: No permissions to creating new namespace",
      "bwrap: setting up uid map",
      "bwrap: setting up gid map",
      "bwrap: error writing to setgroups",
      "bwrap: Creating new namespace failed",
      "bwrap: Setting userns2 failed",
      "bwrap: Setting pidns failed",
      "bwrap: Can't mount proc",
      "bwrap: Can't mount tmpfs",
      "bwrap: Can't mount devpts",
      "bwrap: Can't mount mqueue",
      "bwrap: Can't bind mount",
      "bwrap: Can't remount readonly",
      "bwrap: Can't find source path",
      "bwrap: Can't get type of source",
      "bwrap: Can't mkdir",
      "bwrap: Can't create file",
      "bwrap: Can't chdir",
      "bwrap: Failed to make / slave",
      "bwrap: Failed to mount tmpfs",
      "bwrap: Creating newroot failed",
      "bwrap: Creating oldroot failed",
      "bwrap: pivot_root",
      "bwrap: loopback:",
      "bwrap: Unknown option",
      "bwrap: execvp",
      "bwrap: Can't fork",
      "bwrap: unable to",
      "bwrap: Unexpected capabilities",
      "bwrap: Unexpected setuid user",
    ]),
  }),
]);
