import { realpathSync, statSync } from "node:fs";
import type { LookupFunction } from "node:net";
import { tmpdir } from "node:os";
import { isAbsolute, normalize } from "node:path";
import {
  type ConfinedArgv,
  type SandboxPolicy,
  SandboxPolicyError,
  SandboxProvider,
  SandboxUnavailableError,
} from "@suaveplan/dsh-sandbox";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import type {
  BackendProbeResult,
  LocalBackend,
  LocalBackendName,
  LocalConfinePolicy,
} from "../backend/local-backend.js";
import { type LocalHost, nodeLocalHost } from "../host/local-host.js";
import { landlockLauncherPath } from "../landlock/launcher-path.js";
import { checkAllowList } from "../network/domain-allow-list.js";
import {
  type FilteringProxy,
  PROXY_DENIAL_PREFIX,
  PROXY_DENIAL_REASON,
  type ProxyDenial,
  startFilteringProxy,
} from "../network/filtering-proxy.js";
import {
  DEFAULT_BACKEND_FACTORIES,
  defaultBackendsFor,
  type LocalBackendContext,
  type LocalBackendFactory,
} from "./backend-registry.js";
import {
  canonicalWritableRoots,
  checkPathList,
  DEFAULT_PROTECTED_PATHS,
  resolveDenyRead,
  resolveProtectedPaths,
} from "./path-policy.js";
import { createPrivateTempDirs, type PrivateTempDirs } from "./private-temp-dirs.js";
import { fileIdentity, type ProbeCache } from "./probe-cache.js";

/**
 * How a refusal of the filtering proxy shows in the command's stderr: the
 * proxy's body and reason phrase (wget, Python, plain-HTTP clients), curl's
 * and Python's CONNECT failures.
 */
export const PROXY_DENIAL_SIGNATURES: readonly string[] = Object.freeze([
  PROXY_DENIAL_PREFIX,
  PROXY_DENIAL_REASON,
  "CONNECT tunnel failed, response 403",
  "Tunnel connection failed: 403",
]);

/**
 * Per-call extensions of the seed's {@link SandboxPolicy} that the local
 * provider understands; each adds to the provider's own option of the same name.
 */
export interface LocalSandboxPolicy extends SandboxPolicy {
  /** Extra absolute directories writable under `workspace-write` (canonicalised; protected paths still win). */
  writableRoots?: readonly string[];
  /** Absolute paths, `~/…` paths and globs whose contents the command must not read. */
  denyRead?: readonly string[];
}

/** The backends that implement `writableRoots`, `denyRead` (or refuse it) and `allowUnixSockets`. */
const EXTENSION_BACKENDS: ReadonlySet<LocalBackendName> = new Set(["bwrap", "landlock", "landlock+bwrap"]);

const BACKEND_NAMES: readonly LocalBackendName[] = [
  "bwrap",
  "landlock",
  "landlock+bwrap",
  "seatbelt",
  "windows-acl",
];

/** Options of {@link LocalSandboxProvider}. */
export interface LocalSandboxProviderOptions {
  /** Ordered backend preference (default: the platform's, e.g. `["bwrap", "landlock+bwrap", "landlock"]` on Linux). */
  backends?: readonly LocalBackendName[];
  /**
   * `"deny"` cuts the network of every confined process; `{ allow: [hosts] }`
   * cuts it too except for a local filtering HTTP/HTTPS (CONNECT) proxy run by
   * the provider that lets through only those hosts (`"api.example.com"`,
   * `"*.example.org"`). Backends that cannot are skipped. Default `"allow"`.
   */
  network?: "allow" | "deny" | { allow: readonly string[] };
  /** Host UNIX sockets (absolute paths) that stay reachable under `"deny"` or an allow-list. */
  allowUnixSockets?: readonly string[];
  /**
   * Keep successful probes of the Linux backends between processes (e.g.
   * {@link createFileProbeCache}), keyed by the runner binaries, kernel, boot
   * and user; default none (every provider probes once).
   */
  probeCache?: ProbeCache;
  /** Resolver the filtering proxy uses for upstream hosts (default: the system's); a seam for split-horizon DNS and tests. */
  proxyLookup?: LookupFunction;
  /** Workspace-relative sub-paths or globs kept read-only under `workspace-write` (default {@link DEFAULT_PROTECTED_PATHS}). */
  protectedPaths?: readonly string[];
  /** Extra absolute directories writable under `workspace-write` (a cache, `/dev/shm`); canonicalised per call. */
  writableRoots?: readonly string[];
  /**
   * Absolute paths, `~/…` paths (the caller's home) and globs whose contents the
   * command must not read (e.g. {@link SECRETS_DENY_READ}). Only backends that
   * can hide them are selected (bwrap, landlock+bwrap).
   */
  denyRead?: readonly string[];
  /** Directory under which each `workspace-write` call gets its private temp area (default `os.tmpdir()`). */
  tempRoot?: string;
  /** The bwrap executable (default: `bwrap` on `PATH`). */
  bwrapPath?: string;
  /** The Landlock launcher (default: the one built into this package's `dist/`). */
  landlockLauncherPath?: string;
  /** The Seatbelt runner on macOS (default `/usr/bin/sandbox-exec`). */
  sandboxExecPath?: string;
  /** The restricted-token launcher on Windows (none is shipped; without it the backend reports why not). */
  windowsLauncherPath?: string;
  /** Override or add backend factories (the hook for alternative builds and tests). */
  registry?: Partial<Record<LocalBackendName, LocalBackendFactory>>;
  /** Host seam (default: the real host). */
  host?: LocalHost;
}

interface Selected {
  backend: LocalBackend;
  probe: BackendProbeResult;
}

/**
 * The local `SandboxProvider` (`ctx.sandbox`): wraps an argv with the first
 * usable backend of an ordered preference list. Each backend is probed at most
 * once per provider — by running a trivial confined command — and the result
 * is cached, so `confine` itself spawns nothing. When no backend can run,
 * `confine` throws {@link SandboxUnavailableError} (`SANDBOX_UNAVAILABLE`)
 * listing every backend's reason; it never returns an unconfined argv.
 *
 * Per call it canonicalises the workspace root, resolves the protected
 * sub-paths that exist, and (under `workspace-write`) hands out a private temp
 * area: fresh, empty, closed to other users and never shared between calls.
 * To keep disk work off the caller's path, one spare area is prepared in the
 * background after each use and a used area is removed in the background once
 * the returned `dispose()` is called (after the process exits). The provider's
 * own `dispose()` synchronously removes everything left, spare included.
 */
export class LocalSandboxProvider extends SandboxProvider {
  readonly #order: readonly LocalBackendName[];
  readonly #network: "allow" | "deny" | "allow-list";
  readonly #allowList: readonly string[];
  readonly #allowUnixSockets: readonly string[];
  readonly #proxyLookup: LookupFunction | undefined;
  readonly #probeCache: ProbeCache | undefined;
  #proxy: FilteringProxy | undefined;
  readonly #protected: readonly string[];
  readonly #writableRoots: readonly string[];
  readonly #denyRead: readonly string[];
  readonly #tempDirs: PrivateTempDirs;
  readonly #factories: Record<LocalBackendName, LocalBackendFactory>;
  readonly #context: LocalBackendContext;
  readonly #backends = new Map<LocalBackendName, LocalBackend>();
  readonly #probes = new Map<LocalBackendName, BackendProbeResult>();
  #selected: Selected | undefined;
  #disposed = false;

  /** @throws SandboxError (`SANDBOX_INVALID_OPTIONS`) naming the bad option. */
  constructor(options: LocalSandboxProviderOptions = {}) {
    super();
    const host = options.host ?? nodeLocalHost;
    const order = options.backends ?? defaultBackendsFor(host.platform);
    if (!Array.isArray(order) || order.length === 0) {
      throw invalidOption("backends must be a non-empty array of backend names");
    }
    for (const [i, name] of order.entries()) {
      if (!BACKEND_NAMES.includes(name)) {
        throw invalidOption(
          `backends[${i}] must be one of ${BACKEND_NAMES.join(", ")}, got ${JSON.stringify(name)}`,
        );
      }
    }
    if (new Set(order).size !== order.length) throw invalidOption("backends must not name a backend twice");
    const network = options.network ?? "allow";
    let allowList: readonly string[] = [];
    if (typeof network === "object" && network !== null) {
      const checked = checkAllowList((network as { allow?: unknown }).allow);
      if (!("ok" in checked)) {
        throw invalidOption(
          checked.index === -1
            ? `network.allow ${checked.problem}`
            : `network.allow[${checked.index}] ${checked.problem}`,
        );
      }
      allowList = checked.ok;
    } else if (network !== "allow" && network !== "deny") {
      throw invalidOption('network must be "allow", "deny" or { allow: [host names] }');
    }
    this.#allowUnixSockets = checkPathList(
      options.allowUnixSockets,
      "allowUnixSockets",
      "absolute",
      invalidOption,
    );
    if (options.proxyLookup !== undefined && typeof options.proxyLookup !== "function") {
      throw invalidOption("proxyLookup must be a function like dns.lookup");
    }
    this.#proxyLookup = options.proxyLookup;
    this.#probeCache = options.probeCache;
    const protectedPaths = checkPathList(
      options.protectedPaths ?? DEFAULT_PROTECTED_PATHS,
      "protectedPaths",
      "relative",
      invalidOption,
    );
    this.#writableRoots = checkPathList(options.writableRoots, "writableRoots", "absolute", invalidOption);
    this.#denyRead = checkPathList(options.denyRead, "denyRead", "absolute-or-home", invalidOption);
    const tempRoot = options.tempRoot ?? tmpdir();
    if (typeof tempRoot !== "string" || !isAbsolute(tempRoot))
      throw invalidOption("tempRoot must be an absolute path");
    this.#order = [...order];
    this.#network = typeof network === "object" ? "allow-list" : network;
    this.#allowList = allowList;
    this.#protected = protectedPaths.map((rel) => normalize(rel));
    this.#tempDirs = createPrivateTempDirs(tempRoot);
    this.#factories = { ...DEFAULT_BACKEND_FACTORIES, ...definedEntries(options.registry ?? {}) };
    this.#context = {
      host,
      bwrapPath: options.bwrapPath,
      landlockLauncherPath: options.landlockLauncherPath,
      sandboxExecPath: options.sandboxExecPath,
      windowsLauncherPath: options.windowsLauncherPath,
    };
  }

  /** The ordered backend preference of this provider. */
  get backends(): readonly LocalBackendName[] {
    return this.#order;
  }

  /**
   * Probe every configured backend (each at most once per provider; cached)
   * and report, in preference order, whether it can run here, its enforcement,
   * its network-deny support and — when not usable — why not.
   */
  probe(): readonly BackendProbeResult[] {
    return this.#order.map((name) => this.#probeOne(name));
  }

  /**
   * The backend `confine` uses: the first in preference order whose probe
   * succeeded (and, with `network: "deny"`, that can cut the network).
   * @throws SandboxUnavailableError (`SANDBOX_UNAVAILABLE`) listing each backend's reason.
   */
  selectedBackend(): BackendProbeResult {
    return this.#select().probe;
  }

  /**
   * Wrap `argv` to run confined under `policy` with the selected backend.
   * @throws SandboxPolicyError (`SANDBOX_INVALID_POLICY`) for a non-confining policy or a workspace root that is not a directory.
   * @throws SandboxUnavailableError (`SANDBOX_UNAVAILABLE`) when no backend is usable here.
   * @throws SandboxError (`SANDBOX_INVALID_OPTIONS`) for an empty or malformed argv.
   */
  confine(argv: readonly string[], policy: LocalSandboxPolicy): ConfinedArgv {
    this.assertConfinedPolicy(policy);
    const policyError = (message: string): SandboxPolicyError => new SandboxPolicyError(message);
    const callRoots = checkPathList(policy.writableRoots, "policy.writableRoots", "absolute", policyError);
    const callDenyRead = checkPathList(policy.denyRead, "policy.denyRead", "absolute-or-home", policyError);
    if (this.#disposed) {
      throw new SandboxUnavailableError(
        "this LocalSandboxProvider was disposed; create a new one to confine more commands",
      );
    }
    checkArgv(argv);
    const { backend, probe } = this.#select();
    const workspaceRoot = canonicalDirectory(policy.workspaceRoot);
    const writable =
      policy.mode === "workspace-write"
        ? [
            ...canonicalWritableRoots(this.#writableRoots, "writableRoots"),
            ...canonicalWritableRoots(callRoots, "policy.writableRoots"),
          ].filter((root, i, all) => root !== workspaceRoot && all.indexOf(root) === i)
        : [];
    const protectedPaths =
      policy.mode === "workspace-write"
        ? resolveProtectedPaths(this.#protected, [workspaceRoot, ...writable])
        : [];
    const denyRead = resolveDenyRead([...this.#denyRead, ...callDenyRead], workspaceRoot, writable);
    // Backends that know nothing of these extensions must not silently ignore them.
    if (denyRead.length > 0 && probe.denyRead === undefined) {
      throw new SandboxUnavailableError(
        `backend ${backend.name} cannot hide denyRead paths (it does not support them), so ${JSON.stringify(denyRead[0]?.path)} would stay readable; refusing to confine. Use bwrap or landlock+bwrap`,
      );
    }
    if (writable.length > 0 && !EXTENSION_BACKENDS.has(backend.name)) {
      throw new SandboxUnavailableError(
        `backend ${backend.name} does not support writableRoots; refusing to confine rather than ignore them. Use a Linux backend, or drop writableRoots`,
      );
    }
    const local: LocalConfinePolicy = {
      mode: policy.mode,
      workspaceRoot,
      network: this.#network,
      protectedPaths,
      tempDir: policy.mode === "workspace-write" ? this.#tempDirs.take() : undefined,
    };
    if (writable.length > 0) local.writableRoots = writable;
    if (this.#allowUnixSockets.length > 0) local.allowUnixSockets = this.#allowUnixSockets;
    if (this.#network === "allow-list") {
      this.#proxy ??= startFilteringProxy({ allow: this.#allowList, lookup: this.#proxyLookup });
      local.proxySocket = this.#proxy.socketPath;
    }
    if (denyRead.length > 0) local.denyRead = denyRead;
    if (policy.sessionId !== undefined) local.sessionId = policy.sessionId;
    const tempDir = local.tempDir;
    const release = (): void => {
      if (tempDir !== undefined) this.#tempDirs.release(tempDir);
    };
    let confined: ConfinedArgv;
    try {
      confined = backend.wrap(argv, local, probe);
    } catch (error) {
      release();
      throw error;
    }
    if (
      !Array.isArray(confined.argv) ||
      confined.argv.length <= argv.length ||
      confined.argv[0] === argv[0]
    ) {
      release();
      throw new SandboxUnavailableError(
        `backend ${backend.name} returned an argv that is not wrapped by a sandbox runner; refusing to run it unconfined`,
      );
    }
    const result: ConfinedArgv = { ...confined, backend: backend.name, dispose: release };
    // The proxy's refusal, as the command's HTTP tools print it, is a denial too.
    if (this.#network === "allow-list") {
      result.denialSignatures = [...confined.denialSignatures, ...PROXY_DENIAL_SIGNATURES];
    }
    if (denyRead.length > 0) result.deniedReads = denyRead.map((d) => d.path);
    return result;
  }

  /**
   * Synchronously remove every private temp area still held, still being
   * removed, or kept as the spare, and refuse further `confine` calls. Idempotent.
   */
  dispose(): void {
    this.#disposed = true;
    this.#tempDirs.dispose();
    this.#proxy?.close();
  }

  /**
   * Requests the filtering proxy refused so far (network allow-list only;
   * most recent last, at most 100 kept). Empty before the first `confine`.
   */
  networkDenials(): readonly ProxyDenial[] {
    return [...(this.#proxy?.denials ?? [])];
  }

  /**
   * Resolves once no temp area is being created or removed in the background
   * (e.g. before asserting on `tempRoot`'s contents). Never rejects.
   */
  settled(): Promise<void> {
    return this.#tempDirs.settled();
  }

  /** Same as {@link dispose}. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  #backend(name: LocalBackendName): LocalBackend {
    let backend = this.#backends.get(name);
    if (backend === undefined) {
      backend = this.#factories[name](this.#context);
      this.#backends.set(name, backend);
    }
    return backend;
  }

  #probeOne(name: LocalBackendName): BackendProbeResult {
    let result = this.#probes.get(name);
    if (result === undefined) {
      const key = this.#probeCacheKey(name);
      result = key === undefined ? undefined : this.#probeCache?.read(name, key);
      if (result !== undefined) {
        this.#probes.set(name, result);
        return result;
      }
      try {
        result = this.#backend(name).probe();
        if (key !== undefined && result.available) this.#probeCache?.write(name, key, result);
      } catch (error) {
        result = {
          backend: name,
          available: false,
          reason: `its probe threw: ${error instanceof Error ? error.message : String(error)}`,
        };
      }
      this.#probes.set(name, result);
    }
    return result;
  }

  /**
   * What a cached probe of `name` depends on: the user, kernel and boot, and
   * the runner binaries it used. Undefined (never cached) for backends this
   * provider did not build from the default factories on the real host.
   */
  #probeCacheKey(name: LocalBackendName): string | undefined {
    if (this.#probeCache === undefined || this.#context.host !== nodeLocalHost) return undefined;
    if (this.#factories[name] !== DEFAULT_BACKEND_FACTORIES[name]) return undefined;
    if (name !== "bwrap" && name !== "landlock" && name !== "landlock+bwrap") return undefined;
    const host = this.#context.host;
    const bwrap = name === "landlock" ? undefined : host.findExecutable(this.#context.bwrapPath ?? "bwrap");
    return JSON.stringify([
      name,
      host.uid,
      host.kernelRelease,
      host.readText("/proc/sys/kernel/random/boot_id")?.trim() ?? "",
      fileIdentity(bwrap),
      fileIdentity(this.#context.landlockLauncherPath ?? landlockLauncherPath()),
    ]);
  }

  #select(): Selected {
    if (this.#selected !== undefined) return this.#selected;
    const reasons: string[] = [];
    for (const name of this.#order) {
      const probe = this.#probeOne(name);
      if (!probe.available) {
        reasons.push(`${name}: ${probe.reason ?? "unavailable"}`);
        continue;
      }
      if (this.#denyRead.length > 0 && probe.denyRead !== true) {
        reasons.push(
          `${name}: cannot hide denyRead paths (Landlock cannot subtract reads from an allowed parent)`,
        );
        continue;
      }
      if (this.#network === "allow-list" && probe.domainAllowList === undefined) {
        reasons.push(
          `${name}: cannot enforce a network allow-list here${probe.reason === undefined ? "" : ` (${probe.reason})`}`,
        );
        continue;
      }
      if (this.#network !== "allow" && this.#allowUnixSockets.length > 0 && name === "landlock") {
        reasons.push(`${name}: cannot keep chosen UNIX sockets reachable while cutting the network`);
        continue;
      }
      if (this.#network === "deny" && probe.networkDeny !== true) {
        reasons.push(
          `${name}: cannot enforce network "deny" here${probe.reason === undefined ? "" : ` (${probe.reason})`}`,
        );
        continue;
      }
      this.#selected = { backend: this.#backend(name), probe };
      return this.#selected;
    }
    throw new SandboxUnavailableError(
      `no sandbox backend can confine commands on this host, and running them unconfined is never an option. ${reasons.join("; ")}`,
      { details: { backends: this.#order.map((name) => this.#probeOne(name)) } },
    );
  }
}

function invalidOption(message: string): SandboxError {
  return new SandboxError(SANDBOX_CODES.INVALID_OPTIONS, `LocalSandboxProvider: ${message}`);
}

function definedEntries<K extends string, V>(record: Partial<Record<K, V>>): Partial<Record<K, V>> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as Partial<
    Record<K, V>
  >;
}

function checkArgv(argv: readonly string[]): void {
  if (!Array.isArray(argv) || argv.length === 0) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      "argv must be a non-empty array naming the program to run",
    );
  }
  for (const [i, arg] of argv.entries()) {
    if (typeof arg !== "string" || arg.includes("\0") || (i === 0 && arg === "")) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_OPTIONS,
        `argv[${i}] must be a string without NUL bytes (and argv[0] non-empty)`,
      );
    }
  }
}

function canonicalDirectory(root: string): string {
  let real: string;
  try {
    real = normalize(realpathSync.native(root));
  } catch (error) {
    throw new SandboxPolicyError(
      `policy.workspaceRoot cannot be canonicalised: the directory does not resolve (${(error as NodeJS.ErrnoException).code ?? "error"})`,
      { cause: error },
    );
  }
  if (!statSync(real).isDirectory()) {
    throw new SandboxPolicyError(
      "policy.workspaceRoot must name a directory, but it resolves to a non-directory",
    );
  }
  return real;
}
