import { afterEach, describe, expect, it } from "vitest";
import { WorkerSupply } from "./worker-supply.js";
import type { WorkerThread } from "./worker-thread.js";

const MIB = 1024 * 1024;
const LIMIT = 64 * MIB;

const supplies: WorkerSupply[] = [];
afterEach(async () => {
  await Promise.all(supplies.splice(0).map((supply) => supply.close()));
});

function supply(maxSpares: number, windowMs?: number): WorkerSupply {
  const made = new WorkerSupply(LIMIT, maxSpares, windowMs);
  supplies.push(made);
  return made;
}

/** Wait until `check` holds (the spares boot in the background), or fail after `ms`. */
async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting for the spares");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Take `n` workers at once (a burst of runs), then finish and retire them all. */
function burst(from: WorkerSupply, n: number): void {
  const taken: WorkerThread[] = [];
  for (let i = 0; i < n; i++) taken.push(from.take(LIMIT));
  for (const thread of taken) {
    from.finished();
    from.retire(thread);
  }
}

describe("WorkerSupply spares following demand", () => {
  it("keeps one booted spare while there is no demand", async () => {
    const idle = supply(4);
    await until(() => idle.spareCounts.ready === 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(idle.spareCounts).toEqual({ spares: 1, ready: 1 });
  });

  it("boots as many spares as runs were in flight at once, up to maxSpares, one after another", async () => {
    const wide = supply(3);
    await until(() => wide.spareCounts.ready === 1);
    burst(wide, 5);
    // One boots at a time: never two still booting.
    const seen: number[] = [];
    await until(() => {
      const { spares, ready } = wide.spareCounts;
      seen.push(spares - ready);
      return ready === 3;
    });
    expect(Math.max(...seen)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(wide.spareCounts).toEqual({ spares: 3, ready: 3 });
  });

  it("retires the extra spares when the bursts stop, back to one", async () => {
    // A window long enough for three spares to boot one after another on a loaded 2-core machine
    // (with 300 ms, demand could fall back before the third was ready).
    const fading = supply(3, 1_500);
    await until(() => fading.spareCounts.ready === 1);
    burst(fading, 3);
    await until(() => fading.spareCounts.ready === 3);
    // The burst is remembered for one more window, then demand is back to one.
    await until(() => fading.spareCounts.spares === 1, 8_000);
    expect(fading.spareCounts).toEqual({ spares: 1, ready: 1 });
  });

  it("keeps no spare with maxSpares 0, and still hands out workers", async () => {
    const none = supply(0);
    const thread = none.take(LIMIT);
    expect(thread.exited).toBe(false);
    none.finished();
    none.retire(thread);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(none.spareCounts).toEqual({ spares: 0, ready: 0 });
  });

  it("warms a spare up only while at most one run is in flight", async () => {
    const busy = supply(3);
    await until(() => busy.spareCounts.ready === 1);
    expect(busy.warmedSpares).toBe(1);
    // Three runs in flight: the spares that boot meanwhile skip the warm-up.
    const taken = [busy.take(LIMIT), busy.take(LIMIT), busy.take(LIMIT)];
    await until(() => busy.spareCounts.ready === 3);
    expect(busy.warmedSpares).toBe(0);
    for (const thread of taken) {
      busy.finished();
      busy.retire(thread);
    }
    // None in flight: the spare that replaces a taken one warms up again.
    const next = busy.take(LIMIT);
    busy.finished();
    busy.retire(next);
    await until(() => busy.spareCounts.ready === 3);
    expect(busy.warmedSpares).toBe(1);
  });

  it("hands a ready spare to the next run before a booting one", async () => {
    const two = supply(2);
    await until(() => two.spareCounts.ready === 1);
    burst(two, 2);
    await until(() => two.spareCounts.ready === 2);
    const first = two.take(LIMIT);
    expect(first.ready).toBe(true);
    two.finished();
    two.retire(first);
  });
});
