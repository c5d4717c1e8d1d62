import type { ConfinedArgv, SandboxEnforcement, SandboxPolicy } from "@suaveplan/dsh-sandbox";

/** The local confinement backends, in the order a provider may prefer them. */
export type LocalBackendName = "bwrap" | "landlock" | "landlock+bwrap" | "seatbelt" | "windows-acl";

/** What probing a backend on this host found. Probes run once per provider and are cached. */
export interface BackendProbeResult {
  /** The backend probed. */
  backend: LocalBackendName;
  /** True when a trivial confined command actually ran under this backend. */
  available: boolean;
  /** Enforcement achieved here when available. */
  enforcement?: SandboxEnforcement;
  /** Why the backend cannot run here, or why enforcement is partial — in words an operator can act on. */
  reason?: string;
  /** Backend facts, e.g. `{ landlockAbi: 7, bwrapVersion: "0.8.0" }`. */
  facts?: Readonly<Record<string, string | number | boolean>>;
  /** Whether `network: "deny"` is enforced by this backend here. */
  networkDeny?: boolean;
  /** Whether this backend can hide `denyRead` paths here (bwrap masks them; Landlock cannot subtract reads). */
  denyRead?: boolean;
  /** Whether a confined command can open a pty here (`/dev/ptmx` and `/dev/pts` usable). */
  pty?: boolean;
  /**
   * How this backend enforces a domain allow-list here: `"full"` — the command's
   * only network is the proxy (bwrap's empty network namespace plus a bridge);
   * `"partial"` — TCP connect is limited to the proxy's port, on any address
   * (plain Landlock). Absent: it cannot.
   */
  domainAllowList?: "full" | "partial";
}

/** A path whose contents the command must not read (canonical, existing at `confine` time). */
export interface DeniedRead {
  /** Absolute canonical path. */
  path: string;
  /** True for a directory (masked by an empty read-only directory), false for a file (masked by `/dev/null`). */
  directory: boolean;
}

/** The per-call policy a backend receives: the contract's policy plus local operator options. */
export interface LocalConfinePolicy extends SandboxPolicy {
  /**
   * `"deny"` cuts the network (bwrap `--unshare-net`, Landlock ABI 4 TCP rules);
   * `"allow-list"` cuts it too except for the provider's filtering proxy at
   * {@link LocalConfinePolicy.proxySocket}. Default `"allow"`.
   */
  network: "allow" | "deny" | "allow-list";
  /** The filtering proxy's UNIX socket, under `network: "allow-list"`. */
  proxySocket?: string;
  /** Host UNIX sockets left reachable under `"deny"` / `"allow-list"` (not masked). */
  allowUnixSockets?: readonly string[];
  /** Absolute canonical paths under the workspace that stay read-only (e.g. `.git/hooks`). */
  protectedPaths: readonly string[];
  /** Absolute canonical private temp directory for `workspace-write` (exported as `TMPDIR`). */
  tempDir: string | undefined;
  /** Extra absolute canonical directories writable under `workspace-write` (beside the workspace and temp area). */
  writableRoots?: readonly string[];
  /** Paths the command must not read; a backend that cannot hide them throws `SandboxUnavailableError`. */
  denyRead?: readonly DeniedRead[];
}

/** One confinement mechanism. `wrap` is pure: it only builds the argv (probing happens once, elsewhere). */
export interface LocalBackend {
  /** Backend name. */
  readonly name: LocalBackendName;
  /** Run a trivial confined command and report the result. Synchronous; the provider caches it. */
  probe(): BackendProbeResult;
  /** Build the confined argv for `argv` under `policy`. Throws `SandboxUnavailableError` when it cannot honour the policy. */
  wrap(argv: readonly string[], policy: LocalConfinePolicy, probe: BackendProbeResult): ConfinedArgv;
}
