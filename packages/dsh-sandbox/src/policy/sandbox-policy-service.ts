import { realpathSync, statSync } from "node:fs";
import { isAbsolute, normalize } from "node:path";
import { SandboxPolicyError } from "../provider/sandbox-errors.js";
import type {
  SandboxExecutionPolicy,
  SandboxMode,
  SandboxPolicyRequest,
  Session,
} from "./sandbox-policy-types.js";

/** Options of {@link SandboxPolicyService}. */
export interface SandboxPolicyServiceOptions {
  /** Deployment default mode, used when neither the request nor the session chooses one. */
  defaultMode: SandboxMode;
  /** Fallback workspace root for agentless calls and sessions without a cwd (absolute; canonicalised on use). */
  workspaceRoot: string;
}

const MODES: readonly SandboxMode[] = ["read-only", "workspace-write", "danger-full-access"];

/** The session event type whose `mode` overrides the deployment default. */
export const SANDBOX_MODE_EVENT = "sandbox/mode";

/**
 * Resolves the complete per-call sandbox policy (`ctx.sandboxPolicy`). It owns
 * precedence — an explicit approved mode, then the session's last
 * `sandbox/mode` event, then the deployment default — and the root fallback: a
 * session's cwd, else the configured root. Roots are canonicalised with
 * `realpath` (symlinks resolved) and then normalised, so the policy names the
 * directory the spawned process really runs in.
 */
export class SandboxPolicyService {
  readonly #defaultMode: SandboxMode;
  readonly #workspaceRoot: string;

  /** @throws SandboxPolicyError (`SANDBOX_INVALID_POLICY`) naming `defaultMode` or `workspaceRoot`. */
  constructor(options: SandboxPolicyServiceOptions) {
    if (typeof options !== "object" || options === null) {
      throw new SandboxPolicyError(
        "SandboxPolicyService options must be an object with defaultMode and workspaceRoot",
      );
    }
    this.#defaultMode = checkMode(options.defaultMode, "defaultMode");
    this.#workspaceRoot = checkAbsolute(options.workspaceRoot, "workspaceRoot");
  }

  /** The deployment default mode. */
  get defaultMode(): SandboxMode {
    return this.#defaultMode;
  }

  /**
   * Resolve the policy for one capability call.
   * @param request - optional calling session and approved explicit mode.
   * @returns the mode and the canonical absolute workspace root (plus the session id when there is a session).
   * @throws SandboxPolicyError (`SANDBOX_INVALID_POLICY`) naming the bad field (`mode`,
   *   `session.cwd`, `session.events[i].mode`, `workspaceRoot`) — including a root that does not exist.
   */
  resolve(request: SandboxPolicyRequest = {}): SandboxExecutionPolicy {
    if (typeof request !== "object" || request === null) {
      throw new SandboxPolicyError("request must be an object ({ session?, mode? })");
    }
    const { session } = request;
    if (session !== undefined) checkSession(session);
    const explicit = request.mode === undefined ? undefined : checkMode(request.mode, "mode");
    const mode =
      explicit ?? (session === undefined ? undefined : this.overrideOf(session)) ?? this.#defaultMode;
    const workspaceRoot =
      session?.cwd !== undefined
        ? canonicalDirectory(checkAbsolute(session.cwd, "session.cwd"), "session.cwd")
        : canonicalDirectory(this.#workspaceRoot, "workspaceRoot");
    const policy: SandboxExecutionPolicy = { mode, workspaceRoot };
    if (session !== undefined) policy.sessionId = session.id;
    return policy;
  }

  /**
   * Read the session's override without applying the deployment default.
   * @param session - the session whose event log supplies the override.
   * @returns the mode of the last `sandbox/mode` event, or `undefined` without one.
   * @throws SandboxPolicyError (`SANDBOX_INVALID_POLICY`) naming `session.events[i].mode` when that event's mode is invalid.
   */
  overrideOf(session: Session): SandboxMode | undefined {
    checkSession(session);
    for (let i = session.events.length - 1; i >= 0; i--) {
      const event = session.events[i];
      if (event?.type === SANDBOX_MODE_EVENT) return checkMode(event.mode, `session.events[${i}].mode`);
    }
    return undefined;
  }
}

function checkMode(value: unknown, field: string): SandboxMode {
  if (typeof value === "string" && (MODES as readonly string[]).includes(value)) return value as SandboxMode;
  throw new SandboxPolicyError(
    `${field} must be one of ${MODES.map((m) => `"${m}"`).join(", ")}, got ${kind(value)}`,
  );
}

function checkAbsolute(value: unknown, field: string): string {
  if (typeof value !== "string" || value.length === 0 || value.includes("\0") || !isAbsolute(value)) {
    throw new SandboxPolicyError(`${field} must be a non-empty absolute path, got ${kind(value)}`);
  }
  return value;
}

function checkSession(session: unknown): asserts session is Session {
  if (typeof session !== "object" || session === null) {
    throw new SandboxPolicyError(`session must be an object, got ${kind(session)}`);
  }
  const { id, events } = session as Partial<Session>;
  if (typeof id !== "string") throw new SandboxPolicyError(`session.id must be a string, got ${kind(id)}`);
  if (!Array.isArray(events))
    throw new SandboxPolicyError(`session.events must be an array, got ${kind(events)}`);
}

function canonicalDirectory(path: string, field: string): string {
  let real: string;
  try {
    real = realpathSync.native(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unknown error";
    throw new SandboxPolicyError(
      `${field} cannot be canonicalised: the directory does not resolve (${code})`,
      {
        cause: error,
        details: { field, errno: code },
      },
    );
  }
  if (!statSync(real).isDirectory()) {
    throw new SandboxPolicyError(`${field} must name a directory, but it resolves to a non-directory`, {
      details: { field },
    });
  }
  return normalize(real);
}

function kind(value: unknown): string {
  if (typeof value === "string") return value.length > 40 ? "a long string" : JSON.stringify(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}
