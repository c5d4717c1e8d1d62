import type { EngineCapabilities } from "@suaveplan/sandbox-core/types";

/**
 * A built-in engine's capabilities as its package declares them, loaded
 * without starting the engine (isolated-vm itself is not loaded: a caller
 * needs no native addon to send work to isolate workers); undefined for an
 * engine registered elsewhere.
 */
export async function builtinCapabilities(engine: string): Promise<EngineCapabilities | undefined> {
  switch (engine) {
    case "vm":
      return (await import("@suaveplan/sandbox/vm-engine")).VM_CAPABILITIES;
    case "worker":
      return (await import("@suaveplan/sandbox/worker-engine")).WORKER_CAPABILITIES;
    case "spawn":
      return (await import("@suaveplan/sandbox/spawn-engine")).SPAWN_CAPABILITIES;
    case "isolate":
      return (await import("@suaveplan/sandbox/isolate-engine")).ISOLATE_HELPER_CAPABILITIES;
    case "quickjs":
      return (await import("@suaveplan/sandbox/quickjs-engine")).QUICKJS_CAPABILITIES;
    default:
      return undefined;
  }
}
