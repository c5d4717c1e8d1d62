import type { Script } from "node:vm";
import { LruCache } from "@suaveplan/sandbox-core/code-transformer";
import { compileGuestScript } from "./vm-realm.js";

/**
 * Compiled guest scripts by exact prepared source, least recently used first
 * out: what the vm engine and a reused worker keep, so repeated code is
 * compiled once. A `vm.Script` carries no state of the context it ran in;
 * each run still gets a fresh context.
 */
export class GuestScriptCache {
  private readonly scripts: LruCache<string, Script>;

  /** @param size - Scripts kept at most (default 64). */
  constructor(size = 64) {
    this.scripts = new LruCache(size);
  }

  /**
   * The compile of `source`, reusable in any context; `undefined` when it does
   * not compile (the realm compiles it again and reports the SyntaxError with
   * its location). Never throws.
   */
  compile(source: string): Script | undefined {
    const cached = this.scripts.get(source);
    if (cached !== undefined) return cached;
    let script: Script;
    try {
      script = compileGuestScript(source);
    } catch {
      return undefined;
    }
    this.scripts.set(source, script);
    return script;
  }

  /** Drop every kept script. */
  clear(): void {
    this.scripts.clear();
  }
}
