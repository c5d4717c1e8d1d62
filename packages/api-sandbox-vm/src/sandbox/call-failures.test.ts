import { afterEach, describe, expect, it } from "vitest";
import { type ConformanceEnv, createConformanceEnv } from "../testing/conformance-env.js";
import { createVmSandbox, type VmSandboxHandle } from "./create-vm-sandbox.js";

// A failure lands on the call whose code caused it; the next, innocent call either runs or is told
// at once, with the reason, that the sandbox is gone — never handed the earlier call's failure.

let env: ConformanceEnv;
afterEach(async () => {
  await env.cleanup();
});

const PLUGIN = `
  export const spin = () => { for (;;) {} };
  export const hang = () => new Promise(() => {});
  export const ping = () => "pong";
  export const bigText = () => "x".repeat(20 * 1024 * 1024);
  export const bigLog = () => { console.log("big:", "x".repeat(20 * 1024 * 1024)); return "logged"; };
  // One 4 MiB string referenced 64 times: 256 MiB of copy from 4 MiB of heap.
  export const giantResult = () => { const s = "x".repeat(2 ** 22); return Array(64).fill(s); };
  // Off the heap: 8 x 64 MiB of typed arrays at most, so a missed limit is an assertion, not a dead machine.
  export const hoardBuffers = () => { const hoard = []; for (let i = 0; i < 64; i++) hoard.push(new Uint8Array(8 * 1024 * 1024).fill(1)); return hoard.length; };
  // 1 GiB of array buffers touched, then a spin: the plugin never yields, so nothing in the worker runs.
  export const hoardWithoutYielding = () => { const hoard = []; for (let i = 0; i < 128; i++) hoard.push(new Uint8Array(8 * 1024 * 1024).fill(1)); for (;;) {} };
  // Answers first, then fills the heap in the same drain of the microtask queue.
  export const hoardLater = () => {
    Promise.resolve().then(() => { const hoard = []; for (;;) hoard.push(new Array(1e5).fill(hoard.length)); });
    return "answered";
  };`;

async function start(
  options: { timeoutMs?: number; memoryLimitMb?: number; maxOutputBytes?: number } = {},
): Promise<VmSandboxHandle> {
  env = createConformanceEnv(createVmSandbox);
  const { entry } = await env.plugin({ "plugin.mjs": PLUGIN });
  return env.sandbox({ pluginModulePath: entry, policy: {}, ...options });
}

async function outcome(
  promise: Promise<unknown>,
): Promise<{ ok: unknown } | { code: unknown; message: string }> {
  try {
    return { ok: await promise };
  } catch (error) {
    const e = error as { code?: unknown; message: string };
    return { code: e.code, message: e.message };
  }
}

const DOCS = "see @suaveplan/api-sandbox-vm/docs/errors";
/** A memory failure of a 64 MiB sandbox: by the worker's own accounting, or by the host's resident-memory valve. */
const GREW_PAST_LIMIT =
  /^the (plugin's memory \(heap and array buffers\)|process's resident memory) grew by \d+ bytes(, | while the plugin ran without yielding, )past the sandbox limit of 64 MiB( plus 48 MiB)?; the sandbox was disposed/;

describe("plugin host failures land on the call that caused them", () => {
  it("a call that spins fails itself; the next call is told at once that the sandbox is gone and why", async () => {
    const sandbox = await start({ timeoutMs: 500 });
    const spun = await outcome(sandbox.call("spin"));
    const disposedAtOnce = sandbox.disposed;
    const next = await outcome(sandbox.call("ping"));
    expect({ spun, disposedAtOnce, next }).toEqual({
      spun: {
        code: "SAND_VM_TIMEOUT",
        message: `plugin code ran for more than 500 ms without yielding and was stopped; the sandbox was disposed (SAND_VM_TIMEOUT); ${DOCS}/SAND_VM_TIMEOUT.md`,
      },
      disposedAtOnce: true,
      next: {
        code: "SAND_VM_DISPOSED",
        message: `cannot call "ping": the sandbox is disposed (it failed with SAND_VM_TIMEOUT during plugin export "spin": plugin code ran for more than 500 ms without yielding and was stopped) (SAND_VM_DISPOSED); ${DOCS}/SAND_VM_DISPOSED.md`,
      },
    });
  });

  it("a call made while another spins is rejected as disposed, naming the call that spun", async () => {
    const sandbox = await start({ timeoutMs: 500 });
    const [spun, bystander] = await Promise.all([
      outcome(sandbox.call("spin")),
      outcome(sandbox.call("ping")),
    ]);
    expect({ spun: (spun as { code: unknown }).code, bystander }).toEqual({
      spun: "SAND_VM_TIMEOUT",
      bystander: {
        code: "SAND_VM_DISPOSED",
        message: `the sandbox was disposed while this call waited, because it failed with SAND_VM_TIMEOUT during plugin export "spin": plugin code ran for more than 500 ms without yielding and was stopped (SAND_VM_DISPOSED); ${DOCS}/SAND_VM_DISPOSED.md`,
      },
    });
  });

  it("a call that only waits times out alone; the sandbox goes on", async () => {
    const sandbox = await start({ timeoutMs: 300 });
    const hung = await outcome(sandbox.call("hang"));
    expect({ hung, disposed: sandbox.disposed, next: await outcome(sandbox.call("ping")) }).toEqual({
      hung: {
        code: "SAND_VM_TIMEOUT",
        message: `plugin export "hang" did not settle within 300 ms (SAND_VM_TIMEOUT); ${DOCS}/SAND_VM_TIMEOUT.md`,
      },
      disposed: false,
      next: { ok: "pong" },
    });
  });

  it("memory exhausted after a call answered fails that call, not the next one", async () => {
    const sandbox = await start({ memoryLimitMb: 64, timeoutMs: 20_000 });
    const hoarded = await outcome(sandbox.call("hoardLater"));
    const next = await outcome(sandbox.call("ping"));
    expect({ hoarded, disposedAtOnce: sandbox.disposed, next }).toEqual({
      hoarded: {
        code: "SAND_VM_MEMORY_EXCEEDED",
        message: `the plugin exceeded the sandbox heap limit of 64 MiB; the sandbox was disposed (SAND_VM_MEMORY_EXCEEDED); ${DOCS}/SAND_VM_MEMORY_EXCEEDED.md`,
      },
      disposedAtOnce: true,
      next: {
        code: "SAND_VM_DISPOSED",
        message: `cannot call "ping": the sandbox is disposed (it failed with SAND_VM_MEMORY_EXCEEDED during plugin export "hoardLater": the plugin exceeded the sandbox heap limit of 64 MiB) (SAND_VM_DISPOSED); ${DOCS}/SAND_VM_DISPOSED.md`,
      },
    });
  });

  it("array buffers count against memoryLimitMb: the call that hoards them fails, the next is told why", async () => {
    const sandbox = await start({ memoryLimitMb: 64, timeoutMs: 20_000 });
    const hoarded = await outcome(sandbox.call("hoardBuffers"));
    const next = await outcome(sandbox.call("ping"));
    expect({
      hoarded: "code" in hoarded ? [hoarded.code, GREW_PAST_LIMIT.test(hoarded.message)] : hoarded,
      disposedAtOnce: sandbox.disposed,
      next: "code" in next ? [next.code, next.message.includes('during plugin export "hoardBuffers"')] : next,
    }).toEqual({
      hoarded: ["SAND_VM_MEMORY_EXCEEDED", true],
      disposedAtOnce: true,
      next: ["SAND_VM_DISPOSED", true],
    });
  });

  it("array buffers taken without yielding end the call with SAND_VM_MEMORY_EXCEEDED on every Node line, not at its timeout", async () => {
    // Node 22.16+ samples the busy worker's heap from the host; on every line the host's
    // resident-memory valve stands behind that (on Node 20 it is all there is until the timeout).
    const sandbox = await start({ memoryLimitMb: 64, timeoutMs: 10_000 });
    const hoarded = await outcome(sandbox.call("hoardWithoutYielding"));
    expect({
      code: "code" in hoarded ? hoarded.code : hoarded,
      disposed: sandbox.disposed,
      next: await outcome(sandbox.call("ping")).then((next) => ("code" in next ? next.code : next)),
    }).toEqual({ code: "SAND_VM_MEMORY_EXCEEDED", disposed: true, next: "SAND_VM_DISPOSED" });
    expect((hoarded as { message: string }).message).toMatch(GREW_PAST_LIMIT);
  });

  it("a result over maxOutputBytes fails its own call only; the sandbox goes on", async () => {
    const sandbox = await start({ maxOutputBytes: 1024 * 1024 });
    const big = await outcome(sandbox.call("bigText"));
    expect({ big, disposed: sandbox.disposed, next: await outcome(sandbox.call("ping")) }).toEqual({
      big: {
        code: "SAND_VM_OUTPUT_EXCEEDED",
        // The codec text of a 20 MiB string: its JSON quotes around 20 971 520 characters, 2 bytes each.
        message: `plugin export "bigText" returned ${(20 * 1024 * 1024 + 2) * 2} bytes, more than maxOutputBytes (1048576); the sandbox goes on (SAND_VM_OUTPUT_EXCEEDED); ${DOCS}/SAND_VM_OUTPUT_EXCEEDED.md`,
      },
      disposed: false,
      next: { ok: "pong" },
    });
  });

  it("refuses a maxOutputBytes that is not a positive integer, naming the field", async () => {
    env = createConformanceEnv(createVmSandbox);
    const { entry } = await env.plugin({ "plugin.mjs": PLUGIN });
    expect(
      await outcome(createVmSandbox({ pluginModulePath: entry, policy: {}, maxOutputBytes: 0 })),
    ).toEqual({
      code: "SAND_VM_INVALID_OPTIONS",
      message: `Invalid createVmSandbox options: options.maxOutputBytes must be a positive integer number of bytes (got 0) (SAND_VM_INVALID_OPTIONS); ${DOCS}/SAND_VM_INVALID_OPTIONS.md`,
    });
  });

  it("a value whose copy would pass half of memoryLimitMb is refused before it is built, on its own call; the next call runs", async () => {
    // Under a 64 MiB limit the copy may hold 32 MiB: a 20 MiB string is 40 MiB of codec text, and a
    // 4 MiB string referenced 64 times is 512 MiB (on Node 24 building it aborted the whole process).
    const logs: unknown[] = [];
    env = createConformanceEnv(createVmSandbox);
    const { entry } = await env.plugin({ "plugin.mjs": PLUGIN });
    const sandbox = await env.sandbox({
      pluginModulePath: entry,
      policy: {},
      memoryLimitMb: 64,
      timeoutMs: 20_000,
      onLog: (entry) => logs.push(entry),
    });
    const refused = {
      code: "SAND_VM_DATA_CLONE_FAILED",
      message: `a value larger than ${32 * 1024 * 1024} bytes (half of the sandbox's memory limit) could not be cloned across the sandbox boundary (SAND_VM_DATA_CLONE_FAILED); ${DOCS}/SAND_VM_DATA_CLONE_FAILED.md`,
    };
    expect({
      big: await outcome(sandbox.call("bigText")),
      giant: await outcome(sandbox.call("giantResult")),
      log: await outcome(sandbox.call("bigLog")),
      logs,
      next: await outcome(sandbox.call("ping")),
      disposed: sandbox.disposed,
    }).toEqual({
      big: refused,
      giant: refused,
      log: { ok: "logged" },
      logs: [{ level: "log", message: "big: [larger than the copy limit]" }],
      next: { ok: "pong" },
      disposed: false,
    });
  });
});
