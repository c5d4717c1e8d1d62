import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { createHostCodec } from "@suaveplan/sandbox-guest";
import { afterEach, describe, expect, it } from "vitest";
import { WorkerEngine } from "../src/index.js";

// result.usage from real workers (built entry: `pnpm build` first). cpuMs is the time the
// guest's code ran in its realm, measured by the driver inside the worker.

const MIB = 1024 * 1024;
const codec = createHostCodec();
const engines: WorkerEngine[] = [];
function makeEngine(): WorkerEngine {
  const engine = new WorkerEngine();
  engines.push(engine);
  return engine;
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.destroy()));
});

describe("WorkerEngine usage", () => {
  it("reports wall time, the guest's CPU time in its realm, heap growth and output bytes", async () => {
    const engine = makeEngine();
    const result = await engine.execute(
      "let n = 0; for (let i = 0; i < 1e6; i++) n += i; console.log('héllo'); n",
    );
    expect(result.usage).toStrictEqual({
      wallMs: result.duration,
      cpuMs: expect.any(Number),
      heapBytes: result.memoryUsed,
      outputBytes: 6,
      toolCalls: 0,
      toolBytes: 0,
    });
    expect(result.usage?.cpuMs).toBeGreaterThan(0);
    expect(result.usage?.cpuMs).toBeLessThanOrEqual(result.duration);
  });

  it("counts host calls and the codec bytes of their input and output", async () => {
    const engine = makeEngine();
    const result = await engine.execute(
      "(await tools.double({ n: 2 })).doubled",
      {},
      {
        hostCalls: {
          names: ["double"],
          call: async (_name, input) => ({ doubled: (input as { n: number }).n * 2 }),
        },
      },
    );
    const bytes =
      (codec.encode({ n: 2 }, "input", MIB).length + codec.encode({ doubled: 4 }, "output", MIB).length) * 2;
    expect({
      result: result.result,
      toolCalls: result.usage?.toolCalls,
      toolBytes: result.usage?.toolBytes,
    }).toStrictEqual({
      result: 4,
      toolCalls: 1,
      toolBytes: bytes,
    });
  });

  it("reports what the host saw for a cancelled run: wall time and output, no CPU or heap figures", async () => {
    const engine = makeEngine();
    const controller = new AbortController();
    const result = await engine.execute(
      "console.log('waiting'); while (true) {}",
      {},
      {
        signal: controller.signal,
        timeout: 30_000,
        onLog: () => controller.abort(),
      },
    );
    expect({ errorCode: result.errorCode, usage: result.usage }).toStrictEqual({
      errorCode: SANDBOX_CODES.CANCELLED,
      usage: { wallMs: result.duration, outputBytes: 7, toolCalls: 0, toolBytes: 0 },
    });
  });
});
