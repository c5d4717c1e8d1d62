import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { afterAll, describe, expect, it } from "vitest";
import { IsolateEngine } from "../src/index.js";

// Wasm memory lives outside isolated-vm's allocator accounting; the realm caps it at memoryLimit.
// The memory bomb table in the conformance suite grows one WebAssembly.Memory; these are the
// other ways in: many memories, a module's own memory, and a guest that tampers with globals.
// In-process (the realm's caps are the same code in a helper).
const MIB = 1024 * 1024;
const engine = new IsolateEngine({ process: "in-process", timeout: 10_000, memoryLimit: 32 * MIB });
afterAll(() => engine.destroy());

/** A module with its own memory (1 page, no maximum) exporting `grow(pages)` (memory.grow) and `mem`. */
const MODULE_BYTES = [
  0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 6, 1, 0x60, 1, 0x7f, 1, 0x7f, 3, 2, 1, 0, 5, 3, 1, 0, 1, 7, 14, 2, 4,
  0x67, 0x72, 0x6f, 0x77, 0, 0, 3, 0x6d, 0x65, 0x6d, 2, 0, 10, 8, 1, 6, 0, 0x20, 0, 0x40, 0, 0x0b,
];
const MODULE = `const bytes = new Uint8Array(${JSON.stringify(MODULE_BYTES)});`;

async function outcome(code: string): Promise<unknown> {
  const result = await engine.execute(code);
  return result.success ? result.result : result.errorCode;
}

describe("isolate Wasm memory cap", () => {
  it("a module's own memory is capped: memory.grow past the limit returns -1 inside the module", async () => {
    // 32 MiB = 512 pages; the module starts with 1.
    expect(
      await outcome(
        `${MODULE} const { exports } = new WebAssembly.Instance(new WebAssembly.Module(bytes));
         [exports.grow(500), exports.grow(100), exports.mem.buffer.byteLength / 65536]`,
      ),
    ).toEqual([1, -1, 501]);
  });

  it("many memories share one budget: the one that passes it ends the run with SANDBOX_MEMORY_EXCEEDED", async () => {
    expect(
      await outcome(
        "const all = []; for (let i = 0; i < 100; i++) all.push(new WebAssembly.Memory({ initial: 1, maximum: 64 })); all.length",
      ),
    ).toBe(SANDBOX_CODES.MEMORY_EXCEEDED);
    expect(
      await outcome(
        `${MODULE} const module = new WebAssembly.Module(bytes); const all = []; for (let i = 0; i < 100; i++) all.push(new WebAssembly.Instance(module)); all.length`,
      ),
    ).toBe(SANDBOX_CODES.MEMORY_EXCEEDED);
  });

  it("a memory whose initial size passes the limit is refused, and a caught refusal leaves the run in charge", async () => {
    expect(await outcome("new WebAssembly.Memory({ initial: 1024 }); 'made'")).toBe(
      SANDBOX_CODES.MEMORY_EXCEEDED,
    );
    expect(
      await outcome(
        "try { new WebAssembly.Memory({ initial: 1024 }); 'made' } catch (e) { [e instanceof RangeError, e.message] }",
      ),
    ).toEqual([true, "WebAssembly.Memory(): the initial size exceeds the sandbox's memory limit"]);
  });

  it("stays capped when the guest replaces Number and passes a descriptor whose values change on each read", async () => {
    expect(
      await outcome(`
        globalThis.Number = () => 0;
        let reads = 0;
        const shifty = { valueOf: () => (reads++ === 0 ? 1 : 65536) };
        const memory = new WebAssembly.Memory({ initial: 1, maximum: shifty });
        let grown = 0;
        try { for (;;) { memory.grow(64); grown += 64; } } catch (e) { grown = [grown, e.message]; }
        grown`),
    ).toEqual([0, "WebAssembly.Memory.grow(): the grown memory exceeds the sandbox's memory limit"]);
  });

  it("keeps the constructors' identities: instanceof, prototypes and the static helpers", async () => {
    expect(
      await outcome(`${MODULE}
        const module = new WebAssembly.Module(bytes);
        const memory = new WebAssembly.Memory({ initial: 1, maximum: 16 });
        [memory instanceof WebAssembly.Memory, module instanceof WebAssembly.Module,
         WebAssembly.Memory.prototype.constructor === WebAssembly.Memory,
         WebAssembly.Module.exports(module).map((e) => e.name),
         new WebAssembly.Memory({ initial: 1, maximum: 2, shared: 1 }).buffer instanceof SharedArrayBuffer]`),
    ).toEqual([true, true, true, ["grow", "mem"], true]);
  });
});
