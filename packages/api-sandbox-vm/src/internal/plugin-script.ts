import { Script } from "node:vm";
import { PLUGIN_KERNEL_SOURCE } from "@suaveplan/sandbox-kernel/sources/plugin";

/**
 * The kernel's `plugin` profile as the script each plugin worker evaluates: it evaluates to
 * `install(bridge, configJson)`. The same text on both threads, so the main thread's code cache
 * fits the worker's compile.
 */
export const PLUGIN_SCRIPT = `"use strict";\n(function () {\n${PLUGIN_KERNEL_SOURCE}})().install;\n`;
export const PLUGIN_SCRIPT_FILENAME = "sandbox:/bootstrap";

let codeCache: Uint8Array | undefined;

/**
 * V8's code cache of {@link PLUGIN_SCRIPT}, made once per process (about 14 ms) and handed to each
 * worker: a worker is a new isolate with no compilation cache of its own, and compiling the
 * 150 KB script there cost about 11 ms of every start (1 ms with the cache). A worker whose V8
 * rejects the cache compiles the script anew.
 */
export function pluginScriptCache(): Uint8Array {
  codeCache ??= new Script(PLUGIN_SCRIPT, { filename: PLUGIN_SCRIPT_FILENAME }).createCachedData();
  return codeCache;
}
