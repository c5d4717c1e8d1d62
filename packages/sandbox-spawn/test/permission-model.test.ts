import { once } from "node:events";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SpawnEngine } from "../src/index.js";

// The second layer: what a guest that got out of its vm context would meet.
// A runner-like fixture runs with exactly the engine's flags (it is the
// engine's runnerPath) and reports each attempt.

describe("the child's Node permission model", () => {
  it("denies fs writes, reads beyond the runner file, child processes, workers, bindings, addons and code generation", async () => {
    expect.assertions(2);
    const server = createServer((socket) => socket.end());
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as { port: number };
    await using engine = new SpawnEngine({
      runnerPath: fileURLToPath(new URL("./fixtures/permission-probe-runner.mjs", import.meta.url)),
      preStart: false,
    });
    try {
      const result = await engine.execute(String(port));
      expect(result.success).toBe(true);
      expect(result.result).toStrictEqual({
        writeFile: "ERR_ACCESS_DENIED",
        writeTmp: "ERR_ACCESS_DENIED",
        readOutside: "ERR_ACCESS_DENIED",
        readOwnDirectory: "ERR_ACCESS_DENIED",
        readSelf: "allowed",
        childProcess: "ERR_ACCESS_DENIED",
        worker: "ERR_ACCESS_DENIED",
        processBinding: "ERR_ACCESS_DENIED",
        addon: "ERR_DLOPEN_DISABLED",
        evalInHostRealm: "EvalError",
        functionInHostRealm: "EvalError",
        pollutePrototype: "TypeError",
        // Known gaps of the permission model on Node 20 (see README, Security notes):
        network: "allowed",
        signalParent: "allowed",
      });
    } finally {
      server.close();
    }
  });
});
