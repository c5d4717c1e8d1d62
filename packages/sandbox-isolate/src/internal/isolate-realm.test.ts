import type { GuestRealm, KernelBridge } from "@suaveplan/sandbox-guest";
import { afterEach, describe, expect, it } from "vitest";
import { createIsolatedVmFactory } from "../isolate-factory/isolated-vm-factory.js";
import { IsolatePool } from "./isolate-pool.js";
import { createIsolateRealm } from "./isolate-realm.js";

const pools: IsolatePool[] = [];
afterEach(() => {
  for (const pool of pools.splice(0)) pool.close();
});

/** A booted realm on a fresh isolate, and what it reported through the bridge. */
async function bootedRealm(code: string, straightLine: boolean) {
  const pool = new IsolatePool(createIsolatedVmFactory(), 0);
  pools.push(pool);
  const reported: unknown[][] = [];
  const bridge: KernelBridge = (op, a, b) => {
    if (op === "done") reported.push([a, b]);
    return undefined;
  };
  const realm: GuestRealm = createIsolateRealm({
    slot: pool.acquire(32),
    code,
    straightLine,
    maxTimers: 10,
    maxTimerCreations: 100,
    onRelease: () => undefined,
  })(bridge);
  const runConfig = JSON.stringify({ maxResultBytes: 1024 * 1024, maxCallBytes: 1024 * 1024 });
  expect(await realm.boot(runConfig, "", "", [], 5_000)).toEqual({ ok: true });
  return { realm, reported };
}

describe("IsolateRealm.main", () => {
  it("evaluates straight-line code on the calling thread: the status is there when main returns", async () => {
    const { realm, reported } = await bootedRealm("2 + 3", true);
    const status = realm.main(5_000);
    expect(status).toEqual({ ok: true });
    expect(reported).toEqual([["value", "5"]]);
    realm.dispose();
  });

  it("evaluates any other code with an async call off the host thread", async () => {
    const { realm, reported } = await bootedRealm("(2 + 3)", false);
    const status = realm.main(5_000);
    expect(status).toBeInstanceOf(Promise);
    expect(reported).toEqual([]);
    expect(await status).toEqual({ ok: true });
    expect(reported).toEqual([["value", "5"]]);
    realm.dispose();
  });

  it("still bounds straight-line code by isolated-vm's timeout", async () => {
    // Not straight-line in fact: the flag is the caller's proof, and the timeout stays the backstop.
    const { realm } = await bootedRealm("for (;;) {}", true);
    expect(realm.main(50)).toEqual({ ok: false, outcome: { kind: "timeout", timeoutMs: -1 } });
    realm.dispose();
  });
});
