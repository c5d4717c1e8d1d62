import { afterEach, describe, expect, it } from "vitest";
import { SANDBOX_CODES } from "../error-codes/sandbox-codes.js";
import type {
  EngineCapabilities,
  SandboxEngine,
  SandboxModule,
  SandboxResult,
} from "../types/sandbox-types.js";
import {
  CONFORMANCE_CHECKS,
  CONFORMANCE_DEFAULTS,
  type ConformanceCheck,
  checkApplies,
} from "./conformance-checks.js";
import { createEnv } from "./run-engine-conformance.js";

const ALL_CAPABILITIES: EngineCapabilities = {
  securityBoundary: false,
  tier: "fake engine for the harness self-test",
  enforcesMemoryLimit: true,
  boundsAsyncWork: true,
  streamsLogs: true,
  abortsRunningCode: true,
  measuresCpu: false,
  memoryAccounting: {
    kinds: {
      heap: "allocation",
      strings: "allocation",
      arrayBuffers: "sampled",
      sharedArrayBuffers: "sampled",
      wasmMemory: "sampled",
    },
    sampleIntervalMs: 10,
    exactness: "fake",
  },
};

/** An engine that answers every execution with a fixed outcome and ignores everything else. */
class BrokenEngine implements SandboxEngine {
  readonly name = "vm" as const;
  readonly capabilities = ALL_CAPABILITIES;
  constructor(private readonly answer: () => Promise<SandboxResult>) {}
  execute(): Promise<SandboxResult> {
    return this.answer();
  }
  registerModule(_module: SandboxModule): void {}
  unregisterModule(_name: string): boolean {
    return true;
  }
  reset(): void {}
  async destroy(): Promise<void> {}
}

/** Deliberately broken engines; a harness that asserted nothing would pass them. */
const BROKEN_ENGINES: Record<string, () => SandboxEngine> = {
  "always succeeds with undefined": () =>
    new BrokenEngine(async () => ({ success: true, result: undefined, duration: 0, logs: [] })),
  "always rejects": () => new BrokenEngine(() => Promise.reject(new Error("engine exploded"))),
  "always fails generically": () =>
    new BrokenEngine(async () => ({
      success: false,
      error: "something went wrong",
      errorCode: SANDBOX_CODES.ENGINE_FAILED,
      duration: 0,
      logs: [],
    })),
  "always reports disposed": () =>
    new BrokenEngine(async () => ({
      success: false,
      error: "engine disposed",
      errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
      duration: 0,
      logs: [],
    })),
};

const options = { ...CONFORMANCE_DEFAULTS, shortTimeoutMs: 50, settleMs: 0 };
const live: SandboxEngine[] = [];
afterEach(async () => {
  await Promise.all(live.splice(0).map((engine) => engine.destroy()));
});

async function outcome(check: ConformanceCheck, makeEngine: () => SandboxEngine): Promise<string> {
  try {
    await check.run(createEnv(makeEngine, options, live));
    return "passed";
  } catch {
    return "failed";
  }
}

describe("runEngineConformance self-test", () => {
  it("covers every contract area of the issue", () => {
    const groups = [...new Set(CONFORMANCE_CHECKS.map((check) => check.group))];
    expect(groups).toEqual([
      "results",
      "errors",
      "context and modules",
      "timeouts",
      "timers",
      "memory",
      "console",
      "concurrency",
      "lifecycle",
      "host calls",
      "cancellation",
      "usage",
      "parity",
    ]);
    expect(CONFORMANCE_CHECKS.length).toBeGreaterThanOrEqual(30);
    expect(new Set(CONFORMANCE_CHECKS.map((check) => check.name)).size).toBe(CONFORMANCE_CHECKS.length);
  });

  for (const [flaw, makeEngine] of Object.entries(BROKEN_ENGINES)) {
    it(`fails every check against an engine that ${flaw}`, async () => {
      const outcomes: Record<string, string> = {};
      for (const check of CONFORMANCE_CHECKS) outcomes[check.name] = await outcome(check, makeEngine);
      expect(outcomes).toEqual(Object.fromEntries(CONFORMANCE_CHECKS.map((check) => [check.name, "failed"])));
    });
  }

  it("skips by declared capability, never by engine name", () => {
    const none: EngineCapabilities = {
      ...ALL_CAPABILITIES,
      enforcesMemoryLimit: false,
      boundsAsyncWork: false,
      streamsLogs: false,
      abortsRunningCode: false,
      memoryAccounting: {
        kinds: {
          heap: false,
          strings: false,
          arrayBuffers: false,
          sharedArrayBuffers: false,
          wasmMemory: false,
        },
        exactness: "nothing counted",
      },
    };
    const skipped = CONFORMANCE_CHECKS.filter((check) => !checkApplies(check, none)).map(
      (c) => c.requires ?? (c.appliesTo === undefined ? c.name : "memoryAccounting"),
    );
    expect(skipped).toEqual([
      "boundsAsyncWork",
      "boundsAsyncWork",
      "boundsAsyncWork",
      "boundsAsyncWork",
      "enforcesMemoryLimit",
      ...Array.from({ length: 11 }, () => "memoryAccounting"),
      "streamsLogs",
      "abortsRunningCode",
    ]);
    // Only yielding bombs apply where a kind is bounded only while the guest yields.
    const yields: EngineCapabilities = {
      ...ALL_CAPABILITIES,
      memoryAccounting: {
        kinds: {
          heap: "yields",
          strings: "yields",
          arrayBuffers: "yields",
          sharedArrayBuffers: "yields",
          wasmMemory: "yields",
        },
        exactness: "between entries",
      },
    };
    expect(
      CONFORMANCE_CHECKS.filter(
        (check) =>
          check.name.endsWith("where memoryAccounting bounds it; host and engine survive") &&
          checkApplies(check, yields),
      ).map((check) => check.name.split(" ")[2]),
    ).toEqual(Array.from({ length: 5 }, () => "yielding"));
    expect(CONFORMANCE_CHECKS.every((check) => checkApplies(check, ALL_CAPABILITIES))).toBe(true);
  });
});
