import { describe, expect, it } from "vitest";
import { createCallSlots } from "./call-slots.js";

describe("createCallSlots", () => {
  it("grants up to size at once, then in arrival order as slots are released (twice is once)", async () => {
    const slots = createCallSlots(2);
    const order: string[] = [];
    const a = await slots.acquire();
    const b = await slots.acquire();
    const c = slots.acquire().then((release) => {
      order.push("c");
      return release;
    });
    const d = slots.acquire().then((release) => {
      order.push("d");
      return release;
    });
    await Promise.resolve();
    expect(order).toEqual([]);
    a?.();
    a?.(); // a second release of the same slot frees nothing more
    await c;
    await Promise.resolve();
    expect(order).toEqual(["c"]);
    b?.();
    await d;
    expect(order).toEqual(["c", "d"]);
  });

  it("a waiter whose signal aborts leaves the queue with undefined; an aborted signal never waits", async () => {
    const slots = createCallSlots(1);
    const held = await slots.acquire();
    const controller = new AbortController();
    const waiting = slots.acquire(controller.signal);
    const next = slots.acquire();
    controller.abort();
    expect(await waiting).toBeUndefined();
    expect(await slots.acquire(AbortSignal.abort())).toBeUndefined();
    held?.();
    // The slot went to the next waiter, not to the one that left.
    expect(typeof (await next)).toBe("function");
  });
});
