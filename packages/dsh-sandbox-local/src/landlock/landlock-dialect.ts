import type { RunnerFailureRule } from "@suaveplan/dsh-sandbox";

/**
 * Exit status of the Landlock launcher when it refused to run the command
 * because confinement could not be set up (bad flag, missing root, kernel
 * without Landlock, capability drop failed …). Chosen to be unusual: shells use
 * 126/127, signals 128+N.
 */
export const LANDLOCK_LAUNCHER_SETUP_FAILED_EXIT_CODE = 121;

/** Every diagnostic the launcher itself prints starts with this prefix. */
export const LANDLOCK_LAUNCHER_PREFIX = "landlock-launcher:";

/** Landlock's denial dialect: EACCES for denied file effects, EXDEV for denied reparenting (REFER). */
export const LANDLOCK_DENIAL_SIGNATURES: readonly string[] = Object.freeze([
  "Permission denied",
  "Invalid cross-device link",
]);

/** The launcher failed before running the command: its prefixed line plus its dedicated exit code. */
export const LANDLOCK_RUNNER_FAILURE_RULES: readonly RunnerFailureRule[] = Object.freeze([
  Object.freeze({
    allowedExitCodes: Object.freeze([LANDLOCK_LAUNCHER_SETUP_FAILED_EXIT_CODE]),
    fatalSignatures: Object.freeze([LANDLOCK_LAUNCHER_PREFIX]),
  }),
]);

/** Layered (Landlock inside bwrap): bwrap's read-only binds add EROFS to the dialect. */
export const LAYERED_DENIAL_SIGNATURES: readonly string[] = Object.freeze([
  ...LANDLOCK_DENIAL_SIGNATURES,
  "Read-only file system",
]);

/** bwrap reports its own setup failures as `bwrap: …` lines with exit status 1. */
export const LAYERED_RUNNER_FAILURE_RULES: readonly RunnerFailureRule[] = Object.freeze([
  ...LANDLOCK_RUNNER_FAILURE_RULES,
  Object.freeze({ allowedExitCodes: Object.freeze([1]), fatalSignatures: Object.freeze(["bwrap: "]) }),
]);
