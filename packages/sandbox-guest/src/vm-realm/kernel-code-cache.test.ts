import { Script } from "node:vm";
import { expect, it } from "vitest";
import { buildKernelSource } from "../kernel/kernel-source.js";
import { startVmExecution } from "./start-vm-execution.js";
import { kernelCacheStatus, kernelCodeCache, newKernelBinding, useKernelScript } from "./vm-realm.js";

const REQUEST = {
  code: "2 + 3",
  contextText: "",
  modulesText: "",
  sourceModules: [],
  timeoutMs: 1_000,
  maxOutputSize: 1024,
  maxLogLines: 10,
  maxTimers: 1,
  maxTimerCreations: 1,
  maxResultBytes: 1024,
  maxCallBytes: 1024,
};

it("a thread's kernel takes the binding it is given before its first realm, and its code cache fits that kernel", async () => {
  const binding = newKernelBinding();
  const taken = {
    notAName: useKernelScript({ binding: "globalThis" }),
    // The text given with a binding must be the kernel made for that binding.
    otherText: useKernelScript({ binding, source: buildKernelSource(newKernelBinding()) }),
    given: useKernelScript({ binding, source: buildKernelSource(binding) }),
  };
  const { outcome } = await startVmExecution(REQUEST).result;
  const cache = kernelCodeCache();
  const accepted = kernelCacheStatus() === "accepted";
  const fits = new Script(buildKernelSource(binding), { filename: "suaveplan:kernel", cachedData: cache });
  expect({
    taken,
    outcome,
    accepted,
    // V8 checks a cache against the source's length, not its text (a kernel with another binding of
    // the same length would take it): the cache is only ever handed to the same text.
    fits: fits.cachedDataRejected,
    // The kernel is compiled: a later binding would not match the realms already made.
    late: useKernelScript({ binding: newKernelBinding() }),
  }).toEqual({
    taken: { notAName: false, otherText: false, given: true },
    outcome: { kind: "value", text: "5" },
    accepted: false,
    fits: false,
    late: false,
  });
});
