import { describe, expect, it } from "vitest";
import { SandboxError } from "../error-codes/index.js";
import { DEFAULT_MAX_SPARES, parseMaxSpares, SpareDemand } from "./spare-demand.js";

function clocked(options: { min?: number; max: number }) {
  let now = 0;
  const demand = new SpareDemand({ ...options, windowMs: 1000, now: () => now });
  return { demand, advance: (ms: number) => (now += ms) };
}

describe("SpareDemand", () => {
  it("keeps min spares with no demand, and follows the most runs in flight at once up to max", () => {
    const { demand } = clocked({ max: 4 });
    expect(demand.target()).toBe(1);
    demand.started();
    demand.started();
    demand.started();
    expect(demand.target()).toBe(3);
    demand.ended();
    demand.ended();
    demand.ended();
    // The burst is remembered after it ended.
    expect(demand.target()).toBe(3);
    for (let i = 0; i < 6; i++) demand.started();
    expect(demand.target()).toBe(4);
  });

  it("remembers a burst for one more window, then falls back to min", () => {
    const { demand, advance } = clocked({ max: 4 });
    demand.started();
    demand.started();
    demand.ended();
    demand.ended();
    advance(1000);
    expect(demand.target()).toBe(2);
    advance(1000);
    expect(demand.target()).toBe(1);
  });

  it("counts runs still going through quiet windows", () => {
    const { demand, advance } = clocked({ max: 8 });
    demand.started();
    demand.started();
    advance(5000);
    expect(demand.target()).toBe(2);
    expect(demand.running).toBe(2);
    demand.ended();
    demand.ended();
    demand.ended(); // one too many: never below zero
    expect(demand.running).toBe(0);
    advance(2000);
    expect(demand.target()).toBe(1);
  });

  it("keeps none when max is 0, and min never above max", () => {
    const { demand } = clocked({ max: 0 });
    demand.started();
    expect(demand.target()).toBe(0);
    expect(new SpareDemand({ min: 3, max: 2 }).target()).toBe(2);
  });
});

describe("parseMaxSpares", () => {
  it("defaults to 4", () => {
    expect(parseMaxSpares(undefined, "WorkerEngine")).toBe(4);
    expect(DEFAULT_MAX_SPARES).toBe(4);
  });

  it.each([0, 1, 64])("takes %i", (value) => {
    expect(parseMaxSpares(value, "SpawnEngine")).toBe(value);
  });

  it.each([
    [-1, "-1"],
    [1.5, "1.5"],
    [65, "65"],
    ["2", '"2"'],
    [null, "null"],
  ])("refuses %j, naming the engine, the field and the reason", (value, shown) => {
    let thrown: unknown;
    try {
      parseMaxSpares(value, "SpawnEngine");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SandboxError);
    expect((thrown as SandboxError).code).toBe("SANDBOX_INVALID_CONFIG");
    expect((thrown as Error).message).toBe(
      `Invalid SpawnEngine option maxSpares: expected an integer from 0 to 64 (got ${shown}) (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md`,
    );
  });
});
