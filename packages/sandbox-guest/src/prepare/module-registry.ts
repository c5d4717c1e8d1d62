import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { parseSandboxModule } from "@suaveplan/sandbox-core/schemas";
import type { SandboxModule } from "@suaveplan/sandbox-core/types";
import { createHostCodec } from "@suaveplan/sandbox-kernel";
import { stripModuleTypes } from "@suaveplan/sandbox-typescript";
import type { SourceModule } from "../driver/guest-driver.js";
import { MODULE_WRAPPER_CLOSE, MODULE_WRAPPER_OPEN } from "../kernel/kernel-source.js";
import { described } from "../outcome/to-sandbox-result.js";
import { compileGuestScript } from "../vm-realm/vm-realm.js";
import { refuseDynamicImport } from "./refuse-dynamic-import.js";

const codec = createHostCodec();

/** Data modules larger than this cannot be registered, in bytes of codec text. */
const MAX_MODULE_BYTES = 64 * 1024 * 1024;

type Entry = { name: string; text: string } | { name: string; source: string };

/**
 * The modules an engine makes available to later executions, kept the same
 * way by every engine: `exports` as codec text (checked and copied once, at
 * registration), `source` as text evaluated inside each execution. A
 * `checkSource` hook lets the engine refuse source that does not compile.
 */
export class ModuleRegistry {
  private readonly entries = new Map<string, Entry>();
  private cachedText: string | undefined;

  /**
   * @param checkSource - refuses source that cannot run; the default compiles it
   * as the function body every realm wraps it in (V8's own parser).
   */
  constructor(
    private readonly checkSource: (name: string, source: string) => string | undefined = compilesAsModule,
  ) {}

  /**
   * Register (or replace) a module.
   * @throws SandboxError `SANDBOX_INVALID_MODULE` naming the module and the reason.
   */
  register(module: SandboxModule): void {
    const parsed = stripModuleTypes(parseSandboxModule(module));
    let entry: Entry;
    if (parsed.source !== undefined) {
      const refusal = refuseDynamicImport(parsed.source) ?? this.checkSource(parsed.name, parsed.source);
      if (refusal !== undefined) {
        throw new SandboxError(SANDBOX_CODES.INVALID_MODULE, `module ${parsed.name}: ${refusal}`);
      }
      entry = { name: parsed.name, source: parsed.source };
    } else {
      let text: string;
      try {
        text = codec.encode(parsed.exports, "exports", MAX_MODULE_BYTES);
      } catch (error) {
        const why = codec.isNotTransferable(error)
          ? `${error.path} is ${described(error.what)}`
          : error instanceof Error
            ? error.message
            : String(error);
        throw new SandboxError(
          SANDBOX_CODES.INVALID_MODULE,
          `module ${parsed.name}: ${why}; module exports must be plain data`,
          { cause: error },
        );
      }
      entry = { name: parsed.name, text };
    }
    this.entries.delete(parsed.name);
    this.entries.set(parsed.name, entry);
    this.cachedText = undefined;
  }

  /** Remove a module; true when it was registered. */
  unregister(name: string): boolean {
    const removed = this.entries.delete(name);
    if (removed) this.cachedText = undefined;
    return removed;
  }

  /** Remove every module. */
  clear(): void {
    this.entries.clear();
    this.cachedText = undefined;
  }

  /** Data modules as JSON of `[[name, codecText], …]` (each decoded on its own), or "" when there are none. */
  modulesText(): string {
    if (this.cachedText === undefined) {
      const pairs: [string, string][] = [];
      for (const entry of this.entries.values()) if ("text" in entry) pairs.push([entry.name, entry.text]);
      this.cachedText = pairs.length === 0 ? "" : JSON.stringify(pairs);
    }
    return this.cachedText;
  }

  /** Source modules, in registration order. */
  sourceModules(): SourceModule[] {
    const list: SourceModule[] = [];
    for (const entry of this.entries.values()) {
      if ("source" in entry) list.push({ name: entry.name, source: entry.source });
    }
    return list;
  }
}

/** Why a source module does not compile as the function body realms wrap it in, or undefined. */
function compilesAsModule(_name: string, source: string): string | undefined {
  try {
    compileGuestScript(`${MODULE_WRAPPER_OPEN}${source}${MODULE_WRAPPER_CLOSE}`);
    return undefined;
  } catch (error) {
    return `does not compile: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
  }
}
