import { describe, expect, it } from "vitest";
import { SANDBOX_CODES, SandboxError } from "../error-codes/index.js";
import { AuditLogger } from "./index.js";

function configError(attempt: () => unknown): SandboxError {
  try {
    attempt();
  } catch (error) {
    if (error instanceof SandboxError) return error;
    throw error;
  }
  throw new Error("expected a SandboxError");
}

describe("AuditLogger under a flood", () => {
  it("allocates its ring lazily, so a huge maxEntries neither throws RangeError nor reserves memory up front", () => {
    const audit = new AuditLogger({ maxEntries: 2 ** 32 });
    expect(audit.maxEntries).toBe(2 ** 32);
    audit.log("1", { success: true, duration: 1 });
    expect(audit.getEntries()).toHaveLength(1);
  });

  it("stays bounded in entries and in bytes when a guest floods it with huge errors", () => {
    const audit = new AuditLogger({ maxEntries: 50 });
    const huge = "é".repeat(1_000_000);
    for (let i = 0; i < 200; i++) audit.log(String(i), { success: false, duration: 1, error: huge });
    const entries = audit.getEntries();
    expect(entries).toHaveLength(50);
    const error = entries[0]?.error ?? "";
    expect(new TextEncoder().encode(error).byteLength).toBeLessThanOrEqual(4096 + 64);
    expect(error.endsWith("[output truncated at 4096 bytes]")).toBe(true);
    expect(error).not.toContain("\uFFFD");
  });

  it("refuses an unusable clock, onLog or maxErrorBytes with INVALID_CONFIG naming the field", () => {
    // @ts-expect-error — clock must be a function
    expect(configError(() => new AuditLogger({ clock: "now" })).message).toContain("clock");
    // @ts-expect-error — onLog must be a function
    expect(configError(() => new AuditLogger({ onLog: 1 })).message).toContain("onLog");
    const bad = configError(() => new AuditLogger({ maxErrorBytes: 0 }));
    expect(bad.code).toBe(SANDBOX_CODES.INVALID_CONFIG);
    expect(bad.message).toContain("maxErrorBytes");
  });
});
