import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { ENGINE_NAME_PATTERN, type EngineLimits, type SandboxEngine } from "@suaveplan/sandbox-core/types";

/** What an engine factory is given: the sandbox's limits and its `engineOptions`, as the user wrote them. */
export interface EngineSettings {
  /** `timeout`, `memoryLimit`, `maxOutputSize` from the sandbox config. */
  readonly limits: EngineLimits;
  /** `config.engineOptions`: engine-specific settings (e.g. spawn's `env`, isolate's `maxTimers`). */
  readonly options: Readonly<Record<string, unknown>>;
}

/** Builds engines of one kind. */
export interface EngineFactory {
  /** A new engine; throws `SANDBOX_INVALID_CONFIG` for options it cannot take. */
  create(settings: EngineSettings): SandboxEngine;
}

/** Loads a factory, lazily, the first time a sandbox selects the engine. */
export type EngineLoader = () => EngineFactory | Promise<EngineFactory>;

const registry = new Map<string, EngineLoader>([
  [
    "vm",
    async () => {
      const { VmEngine } = await import("@suaveplan/sandbox-vm");
      return { create: ({ limits, options }) => new VmEngine({ ...options, ...limits }) };
    },
  ],
  [
    "worker",
    async () => {
      const { WorkerEngine } = await import("@suaveplan/sandbox-worker");
      return { create: ({ limits, options }) => new WorkerEngine({ ...options, ...limits }) };
    },
  ],
  [
    "spawn",
    async () => {
      const { SpawnEngine } = await import("@suaveplan/sandbox-spawn");
      return { create: ({ limits, options }) => new SpawnEngine({ ...options, ...limits }) };
    },
  ],
  [
    "isolate",
    async () => {
      const { IsolateEngine } = await import("@suaveplan/sandbox-isolate");
      return { create: ({ limits, options }) => new IsolateEngine({ ...options, ...limits }) };
    },
  ],
  [
    "quickjs",
    async () => {
      const { QuickJsEngine } = await import("@suaveplan/sandbox-quickjs");
      return { create: ({ limits, options }) => new QuickJsEngine({ ...options, ...limits }) };
    },
  ],
]);
const BUILTIN = new Set(registry.keys());

/**
 * Make an engine selectable as `createSandbox({ engine: name })` — how a
 * sixth engine plugs in without any change to
 * sandbox-core or this package. The loader runs once per sandbox, on first use.
 *
 * @throws SandboxError `SANDBOX_INVALID_CONFIG` for a malformed name, a
 * built-in name, or a name registered already.
 *
 * @example
 * registerEngine("echo", () => ({ create: ({ limits }) => new EchoEngine(limits) }));
 * const sandbox = createSandbox({ engine: "echo" });
 */
export function registerEngine(name: string, loader: EngineLoader): void {
  if (typeof name !== "string" || !ENGINE_NAME_PATTERN.test(name)) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `registerEngine: name must be lowercase letters, digits and dashes (got ${JSON.stringify(name)})`,
    );
  }
  if (typeof loader !== "function") {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `registerEngine(${JSON.stringify(name)}): loader must be a function`,
    );
  }
  if (registry.has(name)) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `registerEngine: ${JSON.stringify(name)} is ${BUILTIN.has(name) ? "a built-in engine" : "registered already"}; pick another name`,
    );
  }
  registry.set(name, loader);
}

/** Remove an engine registered with {@link registerEngine}; built-ins stay. True when it was registered. */
export function unregisterEngine(name: string): boolean {
  return !BUILTIN.has(name) && registry.delete(name);
}

/** The names `createSandbox({ engine })` accepts now, built-ins first. */
export function registeredEngines(): string[] {
  return [...registry.keys()];
}

/**
 * The loader for `name`.
 * @throws SandboxError `SANDBOX_INVALID_CONFIG` naming the registered engines when there is none.
 */
export function engineLoader(name: string): EngineLoader {
  const loader = registry.get(name);
  if (loader === undefined) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `Invalid sandbox config: config.engine: no engine named ${JSON.stringify(name)}; registered: ${registeredEngines().join(", ")} (use registerEngine to add one)`,
    );
  }
  return loader;
}
