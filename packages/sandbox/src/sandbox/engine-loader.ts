import type { EngineLimits, EngineName, SandboxEngine } from "@suaveplan/sandbox-core/types";

/** Builds an engine of one kind; loaded lazily so unused engines are never imported. */
export type EngineConstructor = new (limits: EngineLimits) => SandboxEngine;

const loaders: Record<EngineName, () => Promise<EngineConstructor>> = {
  vm: async () => (await import("@suaveplan/sandbox-vm")).VmEngine,
  worker: async () => (await import("@suaveplan/sandbox-worker")).WorkerEngine,
  spawn: async () => (await import("@suaveplan/sandbox-spawn")).SpawnEngine,
  isolate: async () => (await import("@suaveplan/sandbox-isolate")).IsolateEngine,
};

/** Import the engine package for `name` (only that one) and return its class. */
export function loadEngine(name: EngineName): Promise<EngineConstructor> {
  return loaders[name]();
}
