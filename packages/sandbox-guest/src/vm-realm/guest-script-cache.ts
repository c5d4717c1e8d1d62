import type { Script } from "node:vm";
import { LruCache } from "@suaveplan/sandbox-core/code-transformer";
import { isStraightLine } from "./straight-line.js";
import { compileGuestScript } from "./vm-realm.js";

/** A compiled guest script and whether it is a provably bounded pure expression. */
export interface CompiledGuestCode {
  /** The compile, reusable in any context; `undefined` when the code does not compile. */
  readonly script: Script | undefined;
  /** See `isStraightLine`: the code may run without node's watchdog thread. */
  readonly straightLine: boolean;
}

/**
 * Compiled guest scripts by exact prepared source, least recently used first
 * out: what the vm engine and a reused worker keep, so repeated code is
 * compiled and proven straight-line once. A `vm.Script` carries no state of
 * the context it ran in; each run still gets a fresh context.
 */
export class GuestScriptCache {
  private readonly scripts: LruCache<string, CompiledGuestCode>;

  /** @param size - Scripts kept at most (default 64). */
  constructor(size = 64) {
    this.scripts = new LruCache(size);
  }

  /** The compile of `source`; never throws (code that does not compile is compiled again by the realm, which reports it). */
  compile(source: string): CompiledGuestCode {
    const cached = this.scripts.get(source);
    if (cached !== undefined) return cached;
    let script: Script;
    try {
      script = compileGuestScript(source);
    } catch {
      return { script: undefined, straightLine: false };
    }
    const compiled = { script, straightLine: isStraightLine(source) };
    this.scripts.set(source, compiled);
    return compiled;
  }

  /** Drop every kept script. */
  clear(): void {
    this.scripts.clear();
  }
}
