import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isSandboxError } from "../error-codes/index.js";
import { type AuditEntry, AuditLogger, hashCode } from "./index.js";

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 6);

/** A clock that returns T0, T0 + 1000, T0 + 2000, … */
function steppingClock(stepMs = 1_000): () => number {
  let next = T0;
  return () => {
    const now = next;
    next += stepMs;
    return now;
  };
}

describe("AuditLogger", () => {
  it("search filters by success", () => {
    const logger = new AuditLogger({ clock: steppingClock() });
    logger.log("1 + 1", { success: true, duration: 4, memoryUsed: 100 }, "vm");
    logger.log("throw 1", {
      success: false,
      duration: 6,
      error: "Uncaught 1",
      errorCode: "SANDBOX_ENGINE_FAILED",
    });

    expect(logger.search({ success: false })).toEqual([
      {
        timestamp: "2026-01-02T03:04:06.006Z",
        codeHash: hashCode("throw 1"),
        duration: 6,
        success: false,
        memoryUsed: 0,
        error: "Uncaught 1",
        errorCode: "SANDBOX_ENGINE_FAILED",
      },
    ]);
    expect(logger.search({ success: true })).toEqual([
      {
        timestamp: "2026-01-02T03:04:05.006Z",
        codeHash: hashCode("1 + 1"),
        duration: 4,
        success: true,
        memoryUsed: 100,
        engine: "vm",
      },
    ]);
  });

  it("statistics aggregate across entries", () => {
    const logger = new AuditLogger({ clock: steppingClock() });
    logger.log("a", { success: true, duration: 10, memoryUsed: 1_000 });
    logger.log("b", { success: false, duration: 20, memoryUsed: 2_000, error: "boom" });
    logger.log("c", { success: true, duration: 30, memoryUsed: 4_000 });

    expect(logger.getStatistics()).toEqual({
      totalRuns: 3,
      successCount: 2,
      failureCount: 1,
      successRate: 2 / 3,
      avgDuration: 20,
      totalMemoryUsed: 7_000,
    });
    logger.clear();
    expect(logger.getEntries()).toEqual([]);
    expect(logger.getStatistics()).toEqual({
      totalRuns: 0,
      successCount: 0,
      failureCount: 0,
      successRate: 0,
      avgDuration: 0,
      totalMemoryUsed: 0,
    });
  });

  it("hashes code as the first 16 hex chars of SHA-256 and never stores the code", () => {
    const code = "const secret = 'hunter2'; secret";
    const full = createHash("sha256").update(code).digest("hex");
    const logger = new AuditLogger();
    const entry = logger.log(code, { success: true, duration: 1 });
    expect(entry.codeHash).toBe(full.slice(0, 16));
    expect(entry.codeHash).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(logger.getEntries())).not.toContain("hunter2");
    expect(Object.isFrozen(entry)).toBe(true);
  });

  it("search honours exclusive after/before bounds and keeps the newest `limit` matches", () => {
    const logger = new AuditLogger({ clock: steppingClock() });
    for (let i = 0; i < 5; i++) logger.log(`run ${i}`, { success: true, duration: i });
    const durations = (entries: AuditEntry[]) => entries.map((e) => e.duration);

    expect(durations(logger.search({ after: T0 + 1_000 }))).toEqual([2, 3, 4]);
    expect(durations(logger.search({ before: new Date(T0 + 2_000) }))).toEqual([0, 1]);
    expect(
      durations(logger.search({ after: new Date(T0).toISOString(), before: new Date(T0 + 4_000) })),
    ).toEqual([1, 2, 3]);
    expect(durations(logger.search({ limit: 2 }))).toEqual([3, 4]);
    expect(durations(logger.search({ limit: 0 }))).toEqual([]);
  });

  it("rejects unusable search bounds with INVALID_OPTIONS", () => {
    const logger = new AuditLogger();
    expect(() => logger.search({ after: "yesterday" })).toThrowError(
      'AuditLogger.search: after must be a Date, epoch ms or ISO 8601 string (got "yesterday") (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md',
    );
    expect(() => logger.search({ limit: -1 })).toThrowError(
      "AuditLogger.search: limit must be a non-negative integer (got -1) (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md",
    );
  });

  it("keeps a bounded ring of the newest maxEntries entries", () => {
    const logger = new AuditLogger({ maxEntries: 3, clock: steppingClock() });
    for (let i = 0; i < 7; i++) logger.log(`run ${i}`, { success: i % 2 === 0, duration: i });
    expect(logger.getEntries().map((e) => e.duration)).toEqual([4, 5, 6]);
    expect(logger.getStatistics().totalRuns).toBe(3);
    logger.log("run 7", { success: true, duration: 7 });
    expect(logger.getEntries().map((e) => e.duration)).toEqual([5, 6, 7]);
    expect(logger.maxEntries).toBe(3);
  });

  it("calls onLog synchronously with each stored entry", () => {
    const seen: AuditEntry[] = [];
    const logger = new AuditLogger({ onLog: (entry) => seen.push(entry), clock: () => T0 });
    const returned = logger.log("x", { success: true, duration: 2, memoryUsed: 8 }, "isolate");
    expect(seen).toEqual([returned]);
    expect(seen[0]).toBe(logger.getEntries()[0]);
  });

  it("rejects a non-positive maxEntries with INVALID_CONFIG", () => {
    let caught: unknown;
    try {
      new AuditLogger({ maxEntries: 0 });
    } catch (error) {
      caught = error;
    }
    expect(isSandboxError(caught, "SANDBOX_INVALID_CONFIG")).toBe(true);
    expect((caught as Error).message).toBe(
      "AuditLogger: maxEntries must be a positive integer (got 0); pass e.g. 10000 (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md",
    );
  });
});
