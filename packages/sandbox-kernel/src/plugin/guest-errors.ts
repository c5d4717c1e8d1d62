import type { CrossingError, GuestKit } from "./guest-kit.js";

/**
 * GUEST REALM. Coded guest errors and the guarded host call. `kit.call` never lets a host
 * object through: the bridge returns a JSON string, and anything the bridge throws (for example a
 * host-realm RangeError on stack exhaustion) is swallowed unbound and replaced by a guest error.
 */
export function installGuestErrors(kit: GuestKit): void {
  const raised = new WeakSet<object>();
  const define = Object.defineProperty;
  class SuaveplanError extends Error {
    declare readonly code: string;
  }
  define(SuaveplanError.prototype, "name", { value: "SuaveplanError", writable: true, configurable: true });

  kit.makeError = (code, message, name) => {
    const suffix = `(${code})`;
    const error = new SuaveplanError(message.endsWith(suffix) ? message : `${message} ${suffix}`);
    define(error, "code", { value: code, enumerable: true });
    if (name !== undefined && name !== "SuaveplanError")
      define(error, "name", { value: name, configurable: true, writable: true });
    raised.add(error);
    return error;
  };
  class ToolError extends Error {
    declare readonly tool: string;
  }
  define(ToolError.prototype, "name", { value: "ToolError", writable: true, configurable: true });
  kit.hidden.push(ToolError, ToolError.prototype);
  kit.makeToolError = (tool, message, code) => {
    const error = new ToolError(message);
    define(error, "tool", { value: tool, enumerable: true });
    if (code !== undefined) {
      define(error, "code", { value: code, enumerable: true });
      raised.add(error);
    }
    return error;
  };
  kit.isSandboxRaised = (value) => typeof value === "object" && value !== null && raised.has(value);

  kit.call = (op, a, b) => {
    let text: unknown;
    try {
      text = kit.bridge(op, a, b);
    } catch {
      throw kit.makeError("SAND_VM_WORKER_FAILED", `the sandbox host could not answer ${op}`);
    }
    if (typeof text !== "string") return undefined;
    const [ok, payload] = JSON.parse(text) as [boolean, unknown];
    if (!ok) {
      const crossing = payload as CrossingError;
      throw kit.makeError(String(crossing.code), String(crossing.message), crossing.name);
    }
    return payload;
  };
}
