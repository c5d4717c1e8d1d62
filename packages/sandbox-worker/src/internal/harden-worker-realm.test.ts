import { Worker } from "node:worker_threads";
import { expect, it } from "vitest";
import { hardenWorkerRealm } from "./harden-worker-realm.js";

it("disables the constructor of every function kind in the realm it runs in (a fresh worker here)", async () => {
  const worker = new Worker(
    `(${hardenWorkerRealm.toString()})();
    const tries = {
      Function: () => (() => {}).constructor("return 1")(),
      AsyncFunction: () => (async () => {}).constructor("return 1"),
      GeneratorFunction: () => function* () {}.constructor("return 1"),
      AsyncGeneratorFunction: () => async function* () {}.constructor("return 1"),
    };
    const out = {};
    for (const [name, attempt] of Object.entries(tries)) {
      try { attempt(); out[name] = "generated code"; } catch (e) { out[name] = e.name + ": " + e.message; }
    }
    require("node:worker_threads").parentPort.postMessage(out);`,
    { eval: true },
  );
  try {
    const refused = "TypeError: Function constructors are disabled in the sandbox worker";
    expect(await new Promise((resolve) => worker.once("message", resolve))).toStrictEqual({
      Function: refused,
      AsyncFunction: refused,
      GeneratorFunction: refused,
      AsyncGeneratorFunction: refused,
    });
  } finally {
    await worker.terminate();
  }
});
