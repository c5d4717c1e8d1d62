/**
 * File-effect policy for confined processes. `read-only` permits only required
 * sinks such as `/dev/null`; `workspace-write` also permits the workspace and a
 * backend-defined temp area; `danger-full-access` bypasses confinement. Network
 * and process visibility are outside this vocabulary.
 */
export type SandboxMode = "read-only" | "workspace-write" | "danger-full-access";

/** A confining (non-`danger-full-access`) mode — the modes a {@link SandboxPolicy} can carry. */
export type ConfinedSandboxMode = Exclude<SandboxMode, "danger-full-access">;

/**
 * How completely a backend governs the file effects it promised on this host.
 * `partial` means the active backend or an older kernel ABI cannot govern every
 * promised effect; callers that need an absolute boundary must refuse it or
 * surface the difference, never treat it as `full`.
 */
export type SandboxEnforcement = "full" | "partial";

/** Opaque identity of the calling session. */
export type SessionId = string;

/**
 * The complete file-effect policy resolved for one capability call. The root is
 * carried even under modes that do not consume it, so callers can resolve the
 * policy once before choosing whether to confine at all.
 */
export interface SandboxExecutionPolicy {
  /** The file-effect mode this execution runs under. */
  mode: SandboxMode;
  /** Absolute, canonical directory that `workspace-write` may write under. */
  workspaceRoot: string;
  /** Identity of the calling session; absent for agentless calls. */
  sessionId?: SessionId;
}

/** One entry of a session's event log; `sandbox/mode` events carry a `mode`. */
export interface SessionEvent {
  /** Event type, e.g. `"sandbox/mode"`. */
  type: string;
  /** The mode chosen, on `sandbox/mode` events. */
  mode?: SandboxMode;
}

/** The calling session, as far as sandbox policy is concerned. */
export interface Session {
  /** Session identity. */
  id: SessionId;
  /** The session's immutable working directory; its workspace boundary. */
  cwd?: string;
  /** The session's event log (latest last). */
  events: readonly SessionEvent[];
}

/** Inputs that select the sandbox policy for one capability call. */
export interface SandboxPolicyRequest {
  /** Calling session; its immutable cwd becomes the workspace boundary. */
  session?: Session;
  /** Explicit approved mode override, which outranks session policy. */
  mode?: SandboxMode;
}

/**
 * What one confined execution may touch — carried per call, never fixed on the
 * provider, so concurrent consumers and escalated retries can ask the same
 * provider for different boundaries. The provider treats it as fully resolved.
 */
export interface SandboxPolicy extends SandboxExecutionPolicy {
  /** The confining mode this execution runs under. */
  mode: ConfinedSandboxMode;
}

/**
 * Evidence that a sandbox runner failed before it executed the wrapped
 * command. A consumer applies {@link RunnerFailureRule.allowedExitCodes} when
 * present, removes {@link RunnerFailureRule.informationalLines} by
 * case-insensitive exact line equality, then matches
 * {@link RunnerFailureRule.fatalSignatures} case-insensitively within each
 * remaining stderr line. Exit status alone never proves runner failure.
 */
export interface RunnerFailureRule {
  /** Non-zero exit codes on which this rule may match; omitted permits any non-zero exit. */
  allowedExitCodes?: readonly number[];
  /** Non-empty substrings identifying a fatal runner diagnostic on one stderr line. */
  fatalSignatures: readonly string[];
  /** Benign stderr lines excluded by exact full-line equality before fatal matching. */
  informationalLines?: readonly string[];
}

/**
 * A {@link SandboxProvider.confine} result: the argv to spawn in place of the
 * caller's own, the enforcement the selected backend achieves, and the two
 * orthogonal stderr classifiers of that backend.
 */
export interface ConfinedArgv {
  /** The wrapped argv (runner, profile, separator, then the caller's argv). */
  argv: string[];
  /** How completely the selected backend enforces the policy's file effects. */
  enforcement: SandboxEnforcement;
  /**
   * The selected backend's denial dialect: case-insensitive stderr substrings
   * a file effect denied by this backend produces (EROFS text under bwrap,
   * EACCES under Landlock, EPERM under Seatbelt).
   */
  denialSignatures: readonly string[];
  /** Structured evidence that the runner failed before running the command; checked before denials. */
  runnerFailureRules: readonly RunnerFailureRule[];
  /** Extra environment the wrapped command needs (e.g. `TMPDIR` of the private temp area). */
  env?: Readonly<Record<string, string>>;
  /** The backend that produced this argv, for diagnostics. */
  backend?: string;
  /**
   * Network policy this argv enforces, reported apart from file enforcement:
   * `"deny"` only when the backend cut the network (e.g. bwrap `--unshare-net`);
   * `"allow-list"` when the only way out is a provider's filtering proxy.
   * Absent means the provider makes no network claim.
   */
  network?: "allow" | "deny" | "allow-list";
  /**
   * Canonical paths whose contents this argv hides from the command (a
   * provider's `denyRead` extension), reported apart from file enforcement.
   * Absent means nothing is hidden: every mode reads everything the caller can.
   */
  deniedReads?: readonly string[];
  /**
   * Release per-call resources (the private temp area) once the spawned process
   * has exited. Idempotent; absent when the call holds nothing.
   */
  dispose?: () => void;
}
