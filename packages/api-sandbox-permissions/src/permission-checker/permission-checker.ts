import type { MeterProvider } from "@opentelemetry/api";
import { PERMISSION_CODES, PermissionError } from "../error-codes/permission-codes.js";
import { matchesFetchRule, toFetchTarget } from "../fetch-rules/fetch-pattern.js";
import { CanonicalisationError, canonicalisePath } from "../fs-rules/canonicalise-path.js";
import { type FsAccess, matchesFsRule } from "../fs-rules/fs-pattern.js";
import { type PermissionCapability, recordDenial } from "../internal/telemetry.js";
import { type ResolvedPermissionPolicy, resolvePermissionPolicy } from "../policy/permission-policy.js";

/**
 * Why a request was denied:
 * - `no-matching-rule` — no policy entry grants it (the default: everything not granted is denied);
 * - `invalid-path` — not a non-empty string, or contains a NUL byte;
 * - `unresolvable-path` — a path component exists but cannot be resolved (`ELOOP`, `EACCES` …);
 * - `invalid-url` — not parsable by WHATWG `URL`;
 * - `unsupported-scheme` — a scheme other than `http:`/`https:`;
 * - `userinfo` — the URL carries a user name or password.
 */
export type DenialReason =
  | "no-matching-rule"
  | "invalid-path"
  | "unresolvable-path"
  | "invalid-url"
  | "unsupported-scheme"
  | "userinfo";

/** An fs request: `path` absolute or relative to the checker's `cwd`. */
export interface FsPermissionRequest {
  readonly capability: "fs";
  readonly path: string;
  readonly access: FsAccess;
}

/** A fetch request for one URL (one redirect hop). */
export interface FetchPermissionRequest {
  readonly capability: "fetch";
  readonly url: string | URL;
}

/** A call to the host tool `tool` (the guest's `tools.<tool>(…)`). */
export interface ToolPermissionRequest {
  readonly capability: "tool";
  readonly tool: string;
}

/** Anything {@link PermissionChecker.check} accepts. */
export type PermissionRequest = FsPermissionRequest | FetchPermissionRequest | ToolPermissionRequest;

/** An allowed fs request. Callers must operate on `canonicalPath`, not on the requested path. */
export interface FsAllowedDecision {
  readonly allowed: true;
  readonly capability: "fs";
  readonly access: FsAccess;
  readonly path: string;
  readonly canonicalPath: string;
  /** The policy pattern that granted it, as written. */
  readonly rule: string;
}

/** A denied fs request. `message` is for host logs (it may name host paths); never show it to a guest. */
export interface FsDeniedDecision {
  readonly allowed: false;
  readonly capability: "fs";
  readonly access: FsAccess;
  readonly path: string;
  readonly canonicalPath: string | undefined;
  readonly reason: DenialReason;
  readonly message: string;
}

/** An allowed fetch hop; `url` is the normalised `href`. */
export interface FetchAllowedDecision {
  readonly allowed: true;
  readonly capability: "fetch";
  readonly url: string;
  readonly rule: string;
}

/** A denied fetch hop. */
export interface FetchDeniedDecision {
  readonly allowed: false;
  readonly capability: "fetch";
  readonly url: string;
  readonly reason: DenialReason;
  readonly message: string;
}

/** An allowed tool call; `rule` is the `policy.tools` entry (the tool's name). */
export interface ToolAllowedDecision {
  readonly allowed: true;
  readonly capability: "tool";
  readonly tool: string;
  readonly rule: string;
}

/** A denied tool call (`reason` is always `no-matching-rule`). */
export interface ToolDeniedDecision {
  readonly allowed: false;
  readonly capability: "tool";
  readonly tool: string;
  readonly reason: DenialReason;
  readonly message: string;
}

/** Outcome of an fs check. */
export type FsPermissionDecision = FsAllowedDecision | FsDeniedDecision;
/** Outcome of a fetch check. */
export type FetchPermissionDecision = FetchAllowedDecision | FetchDeniedDecision;
/** Outcome of a tool check. */
export type ToolPermissionDecision = ToolAllowedDecision | ToolDeniedDecision;
/** Outcome of any check: allowed, or denied with a reason. Checks never throw for a denial. */
export type PermissionDecision = FsPermissionDecision | FetchPermissionDecision | ToolPermissionDecision;

/** Options of {@link PermissionChecker}. */
export interface PermissionCheckerOptions {
  /** Directory relative policy patterns and relative request paths resolve against. Default: `process.cwd()`. */
  cwd?: string;
  /** Meter provider for `plugin.permission_denied_total`. Default: the global one at the time of each denial. */
  meterProvider?: MeterProvider;
}

/**
 * Checks fs, fetch and host-tool requests against a declarative policy
 * `{ fs: [{ path, access: "read" | "write" }], fetch: ["host patterns"], tools: ["toolName"] }`.
 * Deny by default; `write` does not imply `read`. Every denial increments
 * `plugin.permission_denied_total{capability}` and is returned as a decision — `check` never throws
 * for a plain denial.
 *
 * @example
 * const checker = new PermissionChecker({ fs: [{ path: "/srv/data/**", access: "read" }], fetch: ["api.example.com"] });
 * const decision = await checker.checkFs("/srv/data/a.txt", "read"); // { allowed: true, canonicalPath: … }
 */
export class PermissionChecker {
  /** The validated, compiled policy. */
  readonly policy: ResolvedPermissionPolicy;
  /** Directory relative paths resolve against. */
  readonly cwd: string;
  readonly #meterProvider: MeterProvider | undefined;

  /** @throws PermissionError `PERMISSION_INVALID_POLICY` naming the bad entry, e.g. `policy.fs[2].access`. */
  constructor(policy: unknown, options: PermissionCheckerOptions = {}) {
    this.cwd = options.cwd ?? process.cwd();
    this.policy = resolvePermissionPolicy(policy, this.cwd);
    this.#meterProvider = options.meterProvider;
  }

  /** Check any request. Resolves a decision; never rejects for a denial. */
  async check(request: PermissionRequest): Promise<PermissionDecision> {
    if (request.capability === "fs") return this.checkFs(request.path, request.access);
    if (request.capability === "tool") return this.checkTool(request.tool);
    return this.checkFetch(request.url);
  }

  /**
   * Check access to a path. The path is canonicalised first (absolute, symlinks resolved with
   * `realpath` component by component, `..` applied after the symlinks before it, nearest existing
   * ancestor for paths that do not exist yet), then matched against the rules for `access`.
   */
  async checkFs(requestPath: string, access: FsAccess): Promise<FsPermissionDecision> {
    const deny = (reason: DenialReason, message: string, canonicalPath?: string): FsDeniedDecision => {
      this.#denied("fs");
      return { allowed: false, capability: "fs", access, path: requestPath, canonicalPath, reason, message };
    };
    if (typeof requestPath !== "string" || requestPath === "" || requestPath.includes("\0")) {
      return deny("invalid-path", "fs path must be a non-empty string without NUL bytes");
    }
    let canonicalPath: string;
    try {
      canonicalPath = await canonicalisePath(requestPath, this.cwd);
    } catch (error) {
      const errno = error instanceof CanonicalisationError ? error.errno : "EUNKNOWN";
      return deny("unresolvable-path", `fs ${access} of ${JSON.stringify(requestPath)} denied: ${errno}`);
    }
    for (const rule of this.policy.fs) {
      if (rule.access === access && matchesFsRule(rule, canonicalPath)) {
        return {
          allowed: true,
          capability: "fs",
          access,
          path: requestPath,
          canonicalPath,
          rule: rule.pattern,
        };
      }
    }
    return deny(
      "no-matching-rule",
      `fs ${access} of ${JSON.stringify(requestPath)} denied: it resolves to ${JSON.stringify(canonicalPath)}, ` +
        `which no policy.fs rule grants for ${access}`,
      canonicalPath,
    );
  }

  /** Check one fetch hop (scheme, host and port). Synchronous; never throws. */
  checkFetch(url: string | URL): FetchPermissionDecision {
    const shown = typeof url === "string" ? url : url instanceof URL ? url.href : String(url);
    const target = typeof url === "string" || url instanceof URL ? toFetchTarget(url) : "invalid-url";
    if (typeof target === "string") {
      this.#denied("fetch");
      const why: Record<string, string> = {
        "invalid-url": "it is not a valid absolute URL",
        "unsupported-scheme": "only http: and https: URLs can be granted",
        userinfo: "URLs with credentials (user:pass@) are refused",
      };
      return {
        allowed: false,
        capability: "fetch",
        url: shown,
        reason: target as DenialReason,
        message: `fetch of ${JSON.stringify(shown)} denied: ${why[target] ?? target}`,
      };
    }
    for (const rule of this.policy.fetch) {
      if (matchesFetchRule(rule, target)) {
        // The href of the parse that was judged: re-parsing `url` (e.g. through a URL subclass's
        // toString) could name a different host than the one the rules matched.
        return { allowed: true, capability: "fetch", url: target.href, rule: rule.pattern };
      }
    }
    this.#denied("fetch");
    const origin = `${target.scheme}//${target.host}:${target.port}`;
    return {
      allowed: false,
      capability: "fetch",
      url: shown,
      reason: "no-matching-rule",
      message: `fetch of ${JSON.stringify(shown)} denied: no policy.fetch pattern grants ${origin}`,
    };
  }

  /** Check one call to the host tool `tool`: granted only when `policy.tools` lists its exact name. Synchronous; never throws. */
  checkTool(tool: string): ToolPermissionDecision {
    const shown = typeof tool === "string" ? tool : String(tool);
    if (typeof tool === "string" && this.policy.tools.includes(tool)) {
      return { allowed: true, capability: "tool", tool, rule: tool };
    }
    this.#denied("tool");
    return {
      allowed: false,
      capability: "tool",
      tool: shown,
      reason: "no-matching-rule",
      message: `tool call ${JSON.stringify(shown)} denied: no policy.tools entry grants it`,
    };
  }

  #denied(capability: PermissionCapability): void {
    recordDenial(capability, this.#meterProvider);
  }
}

/** Turn a denied decision into a `PERMISSION_DENIED` {@link PermissionError} (for callers that must throw). */
export function permissionDeniedError(
  decision: FsDeniedDecision | FetchDeniedDecision | ToolDeniedDecision,
): PermissionError {
  return new PermissionError(PERMISSION_CODES.DENIED, decision.message, {
    details: { capability: decision.capability, reason: decision.reason },
  });
}
