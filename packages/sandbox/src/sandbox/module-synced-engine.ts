import type { ModuleResolver } from "@suaveplan/sandbox-core/module-resolver";
import type {
  EngineCapabilities,
  EngineName,
  SandboxEngine,
  SandboxModule,
  SandboxOptions,
  SandboxResult,
} from "@suaveplan/sandbox-core/types";

/**
 * Wraps an engine so its registered modules always match the facade's
 * ModuleResolver before each execution — also for engines a pool creates or
 * recycles later.
 */
export class ModuleSyncedEngine implements SandboxEngine {
  private synced = new Map<string, SandboxModule>();

  constructor(
    private readonly engine: SandboxEngine,
    private readonly resolver: ModuleResolver,
  ) {}

  get name(): EngineName {
    return this.engine.name;
  }

  get capabilities(): EngineCapabilities {
    return this.engine.capabilities;
  }

  registerModule(module: SandboxModule): void {
    this.resolver.register(module);
  }

  unregisterModule(name: string): boolean {
    return this.resolver.unregister(name);
  }

  reset(): void {
    this.engine.reset();
    this.synced.clear();
  }

  execute(code: string, context?: Record<string, unknown>, options?: SandboxOptions): Promise<SandboxResult> {
    this.sync();
    return this.engine.execute(code, context, options);
  }

  destroy(): Promise<void> {
    return this.engine.destroy();
  }

  private sync(): void {
    const wanted = new Map<string, SandboxModule>();
    for (const module of this.resolver.getRegisteredModules()) wanted.set(module.name, module);
    for (const [name, module] of this.synced) {
      if (wanted.get(name) !== module) {
        this.engine.unregisterModule(name);
        this.synced.delete(name);
      }
    }
    for (const [name, module] of wanted) {
      if (!this.synced.has(name)) {
        this.engine.registerModule(module);
        this.synced.set(name, module);
      }
    }
  }
}
