import { isBuiltin } from "node:module";
import { expect, it } from "vitest";
import { workerEntrySource } from "./worker-entry-source.js";

// The built entry (run `pnpm build` first) is evaluated as a script by `new Worker(source, { eval: true })`.
it("the built worker entry is one self-contained script: an IIFE requiring only node built-ins, no bundler name helper", () => {
  const source = workerEntrySource() ?? "";
  const required = [...source.matchAll(/__require\("([^"]+)"\)/g)].map((match) => match[1]);
  expect({
    iife: source.startsWith('"use strict";\n(() => {'),
    // The Wasm memory cap is stringified and evaluated in the guest realm, where `__name` would be unbound.
    nameHelper: source.includes("__name"),
    // The kernel's text comes from the host (`workerData.kernelSource`): bundled, it would be in
    // the entry's code cache as well, cloned into every new worker.
    kernelBundled: source.includes("installWebGlobals"),
    // Everything else is bundled: the worker resolves no package at run time.
    requiresBuiltins: required.length > 0,
    notBuiltin: required.filter((name) => !isBuiltin(name as string)),
  }).toStrictEqual({
    iife: true,
    nameHelper: false,
    kernelBundled: false,
    requiresBuiltins: true,
    notBuiltin: [],
  });
});
