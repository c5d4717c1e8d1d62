import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { afterEach, describe, expect, it } from "vitest";
import { WorkerEngine } from "./worker-engine.js";

// Spares through the engine, on real worker threads from the built entry (dist/worker-entry.cjs):
// run `pnpm build` first. How many are kept and when is proven in worker-supply.test.ts.

const engines: WorkerEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.destroy()));
});

describe("WorkerEngine spares", () => {
  it.each([
    [-1, "-1"],
    [2.5, "2.5"],
    [65, "65"],
    ["4", '"4"'],
  ])("refuses maxSpares %j, naming the field and the reason", (maxSpares, shown) => {
    expect(() => new WorkerEngine({ maxSpares: maxSpares as never })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_CONFIG,
        message: `Invalid WorkerEngine option maxSpares: expected an integer from 0 to 64 (got ${shown}) (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md`,
      }),
    );
  });

  it("after a burst of four runs, the next burst of four finds four booted workers", async () => {
    const engine = new WorkerEngine({ maxSpares: 4 });
    engines.push(engine);
    const burst = () => Promise.all(Array.from({ length: 4 }, (_, i) => engine.execute(`${i} * 2`)));
    expect((await burst()).map((r) => r.success && r.result)).toEqual([0, 2, 4, 6]);
    // The spares boot one after another in the background; a booted worker reports `ready`.
    const supply = (engine as unknown as { supply: { spareCounts: { ready: number } } }).supply;
    const end = Date.now() + 10_000;
    while (supply.spareCounts.ready < 4 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(supply.spareCounts).toEqual({ spares: 4, ready: 4 });
    expect((await burst()).map((r) => r.success && r.result)).toEqual([0, 2, 4, 6]);
  });

  it("with maxSpares 0 keeps no worker between runs", async () => {
    const engine = new WorkerEngine({ maxSpares: 0 });
    engines.push(engine);
    expect(await engine.execute("1 + 1")).toMatchObject({ success: true, result: 2 });
    await new Promise((r) => setTimeout(r, 200));
    const supply = (engine as unknown as { supply: { spareCounts: unknown } }).supply;
    expect(supply.spareCounts).toEqual({ spares: 0, ready: 0 });
  });
});
