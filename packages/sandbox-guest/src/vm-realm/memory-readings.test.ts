import * as v8 from "node:v8";
import { prepareGuestCode } from "@suaveplan/sandbox-core/code-transformer";
import { describe, expect, it, vi } from "vitest";
import { createHostCodec } from "../codec/install-codec.js";
import type { ExecutionRequest } from "../host/execution-request.js";
import { startVmExecution } from "./start-vm-execution.js";

// The real function, counted: which runs pay for V8's whole heap statistics.
vi.mock("node:v8", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:v8")>();
  return { ...actual, getHeapStatistics: vi.fn(actual.getHeapStatistics) };
});

const codec = createHostCodec();
const MiB = 1024 * 1024;

function request(code: string, overrides: Partial<ExecutionRequest>): ExecutionRequest {
  const prepared = prepareGuestCode(code);
  return {
    code: prepared.source,
    shift: prepared.shift,
    contextText: "",
    modulesText: "",
    sourceModules: [],
    timeoutMs: 2_000,
    maxOutputSize: 1024 * 1024,
    maxLogLines: 10_000,
    maxTimers: 100,
    maxTimerCreations: 1_000,
    maxResultBytes: 64 * MiB,
    maxCallBytes: 1024 * 1024,
    ...overrides,
  };
}

describe("memoryUsed of a node:vm run", () => {
  it("reads V8's external memory only for runs that could make an array buffer", async () => {
    const runs: [string, string, Partial<ExecutionRequest>][] = [
      ["straight-line, nothing copied in", "2 + 3", { straightLine: true }],
      [
        "straight-line, a context",
        "data.length",
        { straightLine: true, contextText: codec.encode({ data: new Uint8Array(4) }, "context", MiB) },
      ],
      [
        "straight-line, a data module",
        "2 + 3",
        { straightLine: true, modulesText: JSON.stringify([["m", codec.encode(1, "module", MiB)]]) },
      ],
      ["not straight-line", "new ArrayBuffer(8).byteLength", {}],
    ];
    const readings: [string, number, unknown][] = [];
    for (const [name, code, overrides] of runs) {
      vi.mocked(v8.getHeapStatistics).mockClear();
      const ended = await startVmExecution(request(code, overrides), { settleAtOnce: true }).result;
      readings.push([name, vi.mocked(v8.getHeapStatistics).mock.calls.length, ended.outcome.kind]);
    }
    expect(readings).toEqual([
      ["straight-line, nothing copied in", 0, "value"],
      ["straight-line, a context", 2, "value"],
      ["straight-line, a data module", 2, "value"],
      ["not straight-line", 2, "value"],
    ]);
  });
});
