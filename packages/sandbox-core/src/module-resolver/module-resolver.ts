import { SANDBOX_CODES, SandboxError } from "../error-codes/sandbox-codes.js";
import { parseSandboxModule } from "../schemas/sandbox-schemas.js";
import type { SandboxModule } from "../types/sandbox-types.js";

/**
 * Node built-in modules a guest can never be given, with or without the
 * `node:` prefix (subpaths such as `fs/promises` included).
 */
export const BLOCKED_MODULES: readonly string[] = Object.freeze([
  "fs",
  "net",
  "child_process",
  "cluster",
  "dgram",
  "dns",
  "http",
  "https",
  "http2",
  "tls",
  "worker_threads",
  "process",
  "os",
  "path",
  "readline",
  "repl",
  "vm",
]);

/** The built-in safe modules an engine can enable by name. */
export type BuiltinModuleName = "Math" | "JSON" | "Date";

/** Every {@link BuiltinModuleName}, in registry order. */
export const BUILTIN_MODULE_NAMES: readonly BuiltinModuleName[] = Object.freeze(["Math", "JSON", "Date"]);

/**
 * Global names a registered module may not take: they would replace the
 * global object's prototype chain, the engine's own console, a dynamic-code
 * entry point or the host tools (`tools`, the guest's binding to
 * `createSandbox({ tools })`).
 */
export const RESERVED_MODULE_NAMES: readonly string[] = Object.freeze([
  "__proto__",
  "constructor",
  "prototype",
  "globalThis",
  "global",
  "self",
  "window",
  "eval",
  "Function",
  "require",
  "module",
  "exports",
  "console",
  "tools",
]);

const HOST_BUILTINS: Readonly<Record<BuiltinModuleName, unknown>> = Object.freeze({ Math, JSON, Date });
const BLOCKED = new Set(BLOCKED_MODULES);
const RESERVED = new Set(RESERVED_MODULE_NAMES);

function isBuiltinName(name: string): name is BuiltinModuleName {
  return Object.hasOwn(HOST_BUILTINS, name);
}

/**
 * Decides which modules guest code may see. Defence in depth, not a security
 * boundary: it keeps obviously dangerous names (Node built-ins) and non-data
 * values out of a sandbox; the engine's isolation is what actually confines
 * the guest.
 *
 * Built-ins (`Math`, `JSON`, `Date`) are listed by {@link getModules} with the
 * HOST objects as `exports`; engines must inject them by name from the guest
 * realm's own intrinsics ({@link getBuiltinNames}) and copy only
 * {@link getRegisteredModules} into the guest.
 */
export class ModuleResolver {
  private readonly builtins: readonly BuiltinModuleName[];
  private readonly registered = new Map<string, SandboxModule>();

  /** @param allowedBuiltins built-in safe modules to enable (default: all three). */
  constructor(allowedBuiltins: readonly string[] = BUILTIN_MODULE_NAMES) {
    const enabled: BuiltinModuleName[] = [];
    for (const name of allowedBuiltins) {
      if (!isBuiltinName(name)) {
        throw new SandboxError(
          SANDBOX_CODES.INVALID_CONFIG,
          `allowedModules: ${JSON.stringify(name)} is not a built-in safe module; choose from ${BUILTIN_MODULE_NAMES.join(", ")}, and register anything else with registerModule`,
          { details: { field: "allowedModules", value: String(name) } },
        );
      }
      if (!enabled.includes(name)) enabled.push(name);
    }
    this.builtins = Object.freeze(enabled);
  }

  /**
   * Validate and store a module (replacing one of the same name). Throws
   * `SANDBOX_BLOCKED_MODULE` for a Node built-in name and `SANDBOX_INVALID_MODULE`
   * for anything malformed, reserved, a built-in name, or `exports` that is
   * not structured-cloneable plain data. Returns the stored record, whose
   * `exports` is the resolver's own deep copy.
   */
  register(module: SandboxModule): SandboxModule {
    const rawName = (module as { name?: unknown } | null)?.name;
    if (typeof rawName === "string" && this.isBlocked(rawName)) {
      throw new SandboxError(
        SANDBOX_CODES.BLOCKED_MODULE,
        `module.name: ${JSON.stringify(rawName)} is a blocked Node built-in module; it would give guest code host access. ` +
          "Register a narrow module of plain data or guest source instead",
        { details: { field: "module.name", name: rawName } },
      );
    }
    const parsed = parseSandboxModule(module);
    if (parsed.name === "tools") {
      throw invalidModule(
        "module.name",
        '"tools" is reserved for the host tools global (a module would replace it, and the tool handlers would never run); give host functions as createSandbox({ tools }) or execute(code, context, { tools }), or pick another module name',
      );
    }
    if (RESERVED.has(parsed.name)) {
      throw invalidModule(
        "module.name",
        `${JSON.stringify(parsed.name)} is reserved (it would shadow a global the engine controls); pick another name`,
      );
    }
    if (isBuiltinName(parsed.name)) {
      throw invalidModule(
        "module.name",
        `${JSON.stringify(parsed.name)} is a built-in safe module; enable it through allowedModules instead of registering it`,
      );
    }
    const stored: SandboxModule = { name: parsed.name };
    if (parsed.exports !== undefined) {
      try {
        stored.exports = structuredClone(parsed.exports);
      } catch (cause) {
        throw invalidModule(
          "module.exports",
          "must be structured-cloneable plain data (no functions, symbols or host objects); put behaviour in `source`",
          cause,
        );
      }
    }
    if (parsed.source !== undefined) stored.source = parsed.source;
    const frozen = Object.freeze(stored);
    this.registered.set(frozen.name, frozen);
    return frozen;
  }

  /** Remove a registered module; true when it was registered. Built-ins cannot be unregistered. */
  unregister(name: string): boolean {
    return this.registered.delete(name);
  }

  /** Drop every registered module (built-ins stay enabled). */
  clear(): void {
    this.registered.clear();
  }

  /** Enabled built-ins (with host objects as `exports`) followed by registered modules. */
  getModules(): SandboxModule[] {
    return [
      ...this.builtins.map((name) => Object.freeze({ name, exports: HOST_BUILTINS[name] })),
      ...this.registered.values(),
    ];
  }

  /** Only the registered modules: the ones an engine copies into the guest. */
  getRegisteredModules(): SandboxModule[] {
    return [...this.registered.values()];
  }

  /** Enabled built-in names: an engine exposes the guest realm's own intrinsic of each name. */
  getBuiltinNames(): BuiltinModuleName[] {
    return [...this.builtins];
  }

  /** True when `name` is an enabled built-in. */
  isBuiltin(name: string): boolean {
    return isBuiltinName(name) && this.builtins.includes(name);
  }

  /** True when `name` (optionally `node:`-prefixed, subpaths included) is a denylisted Node module. */
  isBlocked(name: string): boolean {
    const bare = name.startsWith("node:") ? name.slice("node:".length) : name;
    const root = bare.split("/", 1)[0] ?? bare;
    return BLOCKED.has(root);
  }

  /** True when guest code may see `name`: an enabled built-in or a registered module. */
  isAllowed(name: string): boolean {
    return !this.isBlocked(name) && (this.isBuiltin(name) || this.registered.has(name));
  }

  /** The denylist. */
  getBlockedModules(): string[] {
    return [...BLOCKED_MODULES];
  }
}

function invalidModule(field: string, reason: string, cause?: unknown): SandboxError {
  return new SandboxError(SANDBOX_CODES.INVALID_MODULE, `Invalid module: ${field}: ${reason}`, {
    details: { field },
    ...(cause === undefined ? {} : { cause }),
  });
}
