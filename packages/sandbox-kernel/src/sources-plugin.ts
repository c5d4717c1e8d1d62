// Types only: the build writes the module itself, dist/sources-plugin.js (see tsup.config.ts),
// and emits these declarations beside it as dist/sources-plugin.d.ts.

/**
 * The `plugin` profile's kernel, bundled: the body of a function that returns it (see
 * `createKernel`). Its `install(bridge, configJson)` returns the plugin host's guest API.
 */
export declare const PLUGIN_KERNEL_SOURCE: string;
