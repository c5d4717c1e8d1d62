import { describe, expect, it } from "vitest";
import { withApp } from "./support/app-process.js";

// A fatal V8 error is contained by default: a real `node --no-node-snapshot app.mjs` (the
// flag the CLI and the MCP server run with, where the old default ran isolates in-process)
// runs one guest line that hits V8's fatal out-of-memory error (CALL_AND_RETRY_LAST) next to
// an execution on the other helper. The V8 report goes to the application's stderr, which the
// test collects (and ignores).

const RESULT = "({ success, result, errorCode, error }) => ({ success, result, errorCode, error })";

describe("fatal V8 errors in guest code", () => {
  it("end only the helper that ran them: its executions resolve SANDBOX_ENGINE_CRASHED, the other helper's run on, the next execution gets a new helper", async () => {
    const body = `
      const pick = ${RESULT};
      const engine = new IsolateEngine({ timeout: 30_000, memoryLimit: 64 * 1024 * 1024 });
      let bombEnded;
      const ended = new Promise((resolve) => (bombEnded = resolve));
      const bomb = engine.execute("new Array(2 ** 28).fill(1.5).length");
      // On the second helper: it waits (through a host call) until the bomb's helper is gone.
      const survivor = engine.execute("await tools.bombEnded(); 'survived'", {}, {
        hostCalls: { names: ["bombEnded"], call: () => ended },
      });
      const during = engine.helperPids;
      const bombResult = await bomb;
      bombEnded();
      const survivorResult = await survivor;
      const after = await Promise.all([engine.execute("2 + 3"), engine.execute("2 + 3")]);
      const helpersAfter = engine.helperPids;
      print({
        processMode: engine.processMode,
        helpersDuring: during.length,
        bomb: pick(bombResult),
        survivor: pick(survivorResult),
        after: after.map(pick),
        helpersAfter: helpersAfter.length,
        bombHelperGone: !isAlive(during[0]),
        bombHelperReplaced: !helpersAfter.includes(during[0]) && helpersAfter.includes(during[1]),
        bombHelperNamed: bombResult.error?.includes("(pid " + during[0] + ")"),
      });
      await engine.destroy();
    `;
    await withApp(body, { flags: ["--no-node-snapshot"] }, async (app) => {
      expect(await app.line()).toEqual({
        processMode: "helper",
        helpersDuring: 2,
        bomb: {
          success: false,
          errorCode: "SANDBOX_ENGINE_CRASHED",
          error: expect.stringMatching(
            /^The isolate helper process \(pid \d+\) crashed \((SIGABRT|SIGTRAP|SIGILL|SIGSEGV): a fatal error in V8 or isolated-vm, such as running out of memory in a way the isolate's heap limit did not catch\) while the code ran; every execution it held failed with it, and the next execution starts a new helper \(SANDBOX_ENGINE_CRASHED\)$/,
          ),
        },
        survivor: { success: true, result: "survived" },
        after: [
          { success: true, result: 5 },
          { success: true, result: 5 },
        ],
        helpersAfter: 2,
        bombHelperGone: true,
        bombHelperReplaced: true,
        bombHelperNamed: true,
      });
      expect((await app.exited).code).toBe(0);
    });
  }, 90_000);
});
