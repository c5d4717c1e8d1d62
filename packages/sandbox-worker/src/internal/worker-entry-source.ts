import { readFileSync } from "node:fs";
import { buildKernelSource, type CodeCacheStatus, newKernelBinding } from "@suaveplan/sandbox-guest/realm";

let cached: string | undefined;

/**
 * The source text of the built worker entry (`worker-entry.cjs`, a
 * self-contained CommonJS script). In the published package it sits in
 * `dist/` next to the engine code; when the engine runs from `src/` (tests in
 * this repo) it is taken from the package's `dist/` (run `pnpm build` first).
 * Read once, then cached. Returns `undefined` when neither file exists.
 */
export function workerEntrySource(): string | undefined {
  if (cached !== undefined) return cached;
  for (const candidate of [
    new URL("./worker-entry.cjs", import.meta.url),
    new URL("../../dist/worker-entry.cjs", import.meta.url),
  ]) {
    try {
      cached = readFileSync(candidate, "utf8");
      return cached;
    } catch {
      // try the next location
    }
  }
  return undefined;
}

/** The name of the wrapped entry's {@link CodeCacheHook} parameter (see {@link workerEntryFunction}). */
export const CODE_CACHE_HOOK = "__suaveplan_code_cache";

/** What the loader tells the entry of its code cache, and how the entry makes one. */
export interface CodeCacheHook {
  /** Whether V8 took the cache it was given: `none` when there was none. */
  readonly status: CodeCacheStatus;
  make(): Uint8Array;
}

let wrapped: string | undefined;

/**
 * The worker entry as a function expression of `require` and
 * {@link CODE_CACHE_HOOK}, the text {@link WORKER_LOADER} compiles in the
 * worker, with the code cache of an earlier worker when the host has one.
 */
export function workerEntryFunction(): string | undefined {
  if (wrapped !== undefined) return wrapped;
  const source = workerEntrySource();
  if (source === undefined) return undefined;
  wrapped = `(function (require, ${CODE_CACHE_HOOK}) {\n${source}\n})`;
  return wrapped;
}

/**
 * What `new Worker(…, { eval: true })` runs: it compiles the entry (from
 * `workerData.entry`) as a `vm.Script`, with `workerData.codeCache` when the
 * host has one, and hands the entry {@link CodeCacheHook}. V8 checks a
 * cache against the source's length and its flags, not its text, so a cache is
 * only ever handed to the text it was made from: the entry this process read
 * once (and the kernel with this process's one binding). The caches are made
 * only from our own code, after the warm-up and before any guest code runs.
 */
export const WORKER_LOADER = `"use strict";
const { Script } = require("node:vm");
const { workerData } = require("node:worker_threads");
const script = new Script(workerData.entry, { filename: "suaveplan:worker-entry", cachedData: workerData.codeCache });
const status = workerData.codeCache === undefined ? "none" : script.cachedDataRejected ? "rejected" : "accepted";
script.runInThisContext()(require, { status, make: () => script.createCachedData() });
`;

/** The code caches a worker makes after its warm-up: of the entry script and of the guest kernel. */
export interface WorkerCodeCaches {
  readonly entry: Uint8Array;
  readonly kernel: Uint8Array;
}

let caches: WorkerCodeCaches | undefined;
let kernelBinding: string | undefined;

/** The code caches, once a worker has made them (this process keeps one pair). */
export function workerCodeCaches(): WorkerCodeCaches | undefined {
  return caches;
}

/** Keep the code caches a worker made after its warm-up, for the workers started after it. */
export function rememberWorkerCodeCaches(made: WorkerCodeCaches): void {
  caches ??= made;
}

/**
 * The kernel's binding name every worker of this process uses (random, made
 * once): a kernel code cache fits only a kernel with the same name.
 */
export function workerKernelBinding(): string {
  kernelBinding ??= newKernelBinding();
  return kernelBinding;
}

let kernelSource: string | undefined;

/**
 * The kernel's text for {@link workerKernelBinding}, made once. The worker entry is built
 * without it and takes it from `workerData`: held as a string constant of the entry, it
 * would be in the entry's code cache too, and every `new Worker` would clone it there.
 */
export function workerKernelSource(): string {
  kernelSource ??= buildKernelSource(workerKernelBinding());
  return kernelSource;
}
