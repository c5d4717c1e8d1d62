import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { VmEngine } from "@suaveplan/sandbox-vm";
import { afterEach, describe, expect, it } from "vitest";
import type { EngineSettings } from "./engine-registry.js";
import { registerEngine, registeredEngines, unregisterEngine } from "./engine-registry.js";
import { createSandbox } from "./sandbox.js";

afterEach(() => {
  unregisterEngine("vm-seen");
});

describe("the engine registry: a fifth engine without editing core or the facade", () => {
  it("runs code on a registered engine and hands it the limits and engineOptions as written", async () => {
    const seen: EngineSettings[] = [];
    registerEngine("vm-seen", () => ({
      create(settings) {
        seen.push(settings);
        return new VmEngine(settings.limits);
      },
    }));
    expect(registeredEngines()).toEqual(["vm", "worker", "spawn", "isolate", "quickjs", "vm-seen"]);
    const sandbox = createSandbox({ engine: "vm-seen", timeout: 1234, engineOptions: { flavour: "test" } });
    try {
      const result = await sandbox.execute("2 + 3");
      expect({ success: result.success, result: result.result }).toEqual({ success: true, result: 5 });
      expect(sandbox.getStatistics().engine).toBe("vm-seen");
      expect(seen).toEqual([
        {
          limits: { timeout: 1234, memoryLimit: 128 * 1024 * 1024, maxOutputSize: 1024 * 1024 },
          options: { flavour: "test" },
        },
      ]);
    } finally {
      await sandbox.destroy();
    }
  });

  it("refuses built-in names, duplicates and malformed names with SANDBOX_INVALID_CONFIG", () => {
    const load = () => ({ create: () => new VmEngine() });
    expect(() => registerEngine("vm", load)).toThrowError(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_CONFIG,
        message: expect.stringContaining("a built-in engine"),
      }),
    );
    registerEngine("vm-seen", load);
    expect(() => registerEngine("vm-seen", load)).toThrowError(/registered already/);
    expect(() => registerEngine("Not A Name", load)).toThrowError(/lowercase letters, digits and dashes/);
    expect(unregisterEngine("vm")).toBe(false);
  });

  it("resolves ENGINE_UNAVAILABLE when a registered engine cannot be loaded", async () => {
    registerEngine("vm-seen", () => {
      throw new Error("the optional peer is not installed");
    });
    const sandbox = createSandbox({ engine: "vm-seen" });
    try {
      const result = await sandbox.execute("1");
      expect({ success: result.success, errorCode: result.errorCode, error: result.error }).toEqual({
        success: false,
        errorCode: SANDBOX_CODES.ENGINE_UNAVAILABLE,
        error: "the optional peer is not installed (SANDBOX_ENGINE_UNAVAILABLE)",
      });
    } finally {
      await sandbox.destroy();
    }
  });
});
