import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { WORKER_FLAGS } from "../sandbox/create-vm-sandbox.js";
import { PLUGIN_SCRIPT, PLUGIN_SCRIPT_FILENAME, pluginScriptCache } from "./plugin-script.js";

// What the cache is for: a plugin worker compiles the kernel's script with the main thread's code
// cache. If V8 in the worker refused it (other flags, another V8), every start would silently pay
// the full compile again (~11 ms instead of ~1 ms).
const compileInWorker = `
const { Script } = require("node:vm");
const { parentPort, workerData } = require("node:worker_threads");
const script = new Script(workerData.source, { filename: workerData.filename, cachedData: workerData.cache });
parentPort.postMessage({ cachedDataRejected: script.cachedDataRejected });
`;

describe("the plugin script's code cache", () => {
  it("is made once per process and accepted by a worker started as a plugin worker is", async () => {
    const cache = pluginScriptCache();
    expect(pluginScriptCache()).toBe(cache);
    const worker = new Worker(compileInWorker, {
      eval: true,
      execArgv: WORKER_FLAGS,
      env: {},
      resourceLimits: { maxOldGenerationSizeMb: 64 },
      workerData: { source: PLUGIN_SCRIPT, filename: PLUGIN_SCRIPT_FILENAME, cache },
    });
    try {
      const reply = await new Promise((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
      });
      expect(reply).toEqual({ cachedDataRejected: false });
    } finally {
      await worker.terminate();
    }
  });
});
