// Types only: the build writes the module itself, dist/sources.js (see tsup.config.ts), and
// emits these declarations beside it as dist/sources.d.ts.
import type { KernelProfileName } from "./profiles/index.js";

/** Each profile's kernel, bundled: the body of a function that returns it (see `createKernel`). */
export declare const KERNEL_SOURCES: Readonly<Record<KernelProfileName, string>>;
