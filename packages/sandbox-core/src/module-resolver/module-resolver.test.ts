import { describe, expect, it } from "vitest";
import { isSandboxError, SANDBOX_CODES, type SandboxError } from "../error-codes/index.js";
import type { SandboxModule } from "../types/index.js";
import { BLOCKED_MODULES, ModuleResolver } from "./index.js";

function thrown(run: () => unknown): SandboxError {
  try {
    run();
  } catch (error) {
    if (isSandboxError(error)) return error;
    throw error;
  }
  throw new Error("expected a SandboxError");
}

describe("ModuleResolver", () => {
  it("register denylisted module throws BLOCKED_MODULE", () => {
    const resolver = new ModuleResolver();
    const error = thrown(() => resolver.register({ name: "fs", exports: {} }));
    expect(error.code).toBe(SANDBOX_CODES.BLOCKED_MODULE);
    expect(error.message).toBe(
      'module.name: "fs" is a blocked Node built-in module; it would give guest code host access. ' +
        "Register a narrow module of plain data or guest source instead (SANDBOX_BLOCKED_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_BLOCKED_MODULE.md",
    );
    for (const name of [...BLOCKED_MODULES, "node:fs", "fs/promises", "node:child_process"]) {
      expect(thrown(() => resolver.register({ name, exports: {} })).code).toBe("SANDBOX_BLOCKED_MODULE");
    }
    expect(resolver.getModules().map((m) => m.name)).toEqual(["Math", "JSON", "Date"]);
  });

  it("builtin Math is auto-loaded", () => {
    const resolver = new ModuleResolver(["Math"]);
    const modules = resolver.getModules();
    expect(modules).toEqual([{ name: "Math", exports: Math }]);
    const [math] = modules;
    expect((math?.exports as typeof Math | undefined)?.PI).toBe(Math.PI);
    expect(resolver.getBuiltinNames()).toEqual(["Math"]);
    expect(resolver.getRegisteredModules()).toEqual([]);
    expect(resolver.isBuiltin("Math")).toBe(true);
    expect(resolver.isBuiltin("JSON")).toBe(false);
    expect(resolver.isAllowed("Math")).toBe(true);
    expect(resolver.isAllowed("Date")).toBe(false);
  });

  it("enables all three built-ins by default and rejects unknown built-in names", () => {
    expect(new ModuleResolver().getBuiltinNames()).toEqual(["Math", "JSON", "Date"]);
    expect(new ModuleResolver(["Date", "Date"]).getBuiltinNames()).toEqual(["Date"]);
    const error = thrown(() => new ModuleResolver(["Math", "fs"]));
    expect(error.code).toBe("SANDBOX_INVALID_CONFIG");
    expect(error.message).toBe(
      'allowedModules: "fs" is not a built-in safe module; choose from Math, JSON, Date, and register anything else with registerModule (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md',
    );
  });

  it("registers, replaces and unregisters plain-data modules as deep copies", () => {
    const resolver = new ModuleResolver([]);
    const config = { limits: { retries: 3 }, tags: ["a"] };
    const stored = resolver.register({ name: "config", exports: config });
    config.limits.retries = 99; // the host keeps no handle on the stored copy
    expect(stored).toEqual({ name: "config", exports: { limits: { retries: 3 }, tags: ["a"] } });
    expect(Object.isFrozen(stored)).toBe(true);

    resolver.register({ name: "helpers", source: "module.exports = { double: (x) => x * 2 };" });
    resolver.register({ name: "config", exports: { limits: { retries: 5 } } });
    expect(resolver.getModules()).toEqual([
      { name: "config", exports: { limits: { retries: 5 } } },
      { name: "helpers", source: "module.exports = { double: (x) => x * 2 };" },
    ]);
    expect(resolver.isAllowed("helpers")).toBe(true);

    expect(resolver.unregister("config")).toBe(true);
    expect(resolver.unregister("config")).toBe(false);
    expect(resolver.getRegisteredModules().map((m) => m.name)).toEqual(["helpers"]);
    resolver.clear();
    expect(resolver.getModules()).toEqual([]);
  });

  it("rejects malformed, reserved, built-in and non-data modules with INVALID_MODULE", () => {
    const resolver = new ModuleResolver();
    const cases: Array<[unknown, string]> = [
      [
        { name: "has-dash", exports: 1 },
        'Invalid module: module.name: must be a JavaScript identifier (got "has-dash") (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md',
      ],
      [
        { name: "empty" },
        "Invalid module: module.exports: needs `exports` (plain data) or `source` (guest JavaScript) (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md",
      ],
      [
        { name: "__proto__", exports: {} },
        'Invalid module: module.name: "__proto__" is reserved (it would shadow a global the engine controls); pick another name (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md',
      ],
      [
        { name: "Math", exports: {} },
        'Invalid module: module.name: "Math" is a built-in safe module; enable it through allowedModules instead of registering it (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md',
      ],
      [
        { name: "leaky", exports: { run: () => process } },
        "Invalid module: module.exports: must be structured-cloneable plain data (no functions, symbols or host objects); put behaviour in `source` (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md",
      ],
    ];
    for (const [input, message] of cases) {
      const error = thrown(() => resolver.register(input as SandboxModule));
      expect(error.code).toBe("SANDBOX_INVALID_MODULE");
      expect(error.message).toBe(message);
    }
    expect(resolver.getRegisteredModules()).toEqual([]);
  });

  it("answers isBlocked for bare, node:-prefixed and subpath names and lists the denylist", () => {
    const resolver = new ModuleResolver();
    expect(resolver.getBlockedModules()).toEqual([
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
    expect(["fs", "node:os", "path/posix", "node:fs/promises"].map((n) => resolver.isBlocked(n))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(["lodash", "fsx", "node:url", "Math"].map((n) => resolver.isBlocked(n))).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(resolver.isAllowed("fs")).toBe(false);
  });
});
