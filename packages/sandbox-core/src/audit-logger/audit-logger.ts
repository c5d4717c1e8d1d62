import { createHash } from "node:crypto";
import { SANDBOX_CODES, type SandboxCode, SandboxError } from "../error-codes/sandbox-codes.js";
import { truncateOutput } from "../resource-limiter/output-budget.js";
import type { Clock, EngineName, SandboxResult } from "../types/sandbox-types.js";

/** Tool calls kept per audit entry (a journal can hold more; the entry stays bounded). */
const MAX_AUDITED_TOOL_CALLS = 100;

/** One recorded execution. Entries are frozen; the code itself is never stored. */
export interface AuditEntry {
  /** When the entry was logged, ISO 8601 (UTC). */
  readonly timestamp: string;
  /** First 16 hex characters of the SHA-256 of the executed code. */
  readonly codeHash: string;
  /** Wall-clock duration of the execution, in ms. */
  readonly duration: number;
  /** Whether the execution succeeded. */
  readonly success: boolean;
  /** Heap bytes attributed to the execution (0 when the engine could not tell). */
  readonly memoryUsed: number;
  /** The failure text, when it failed. */
  readonly error?: string;
  /** The engine that ran the code, when the caller said. */
  readonly engine?: EngineName;
  /** The tool calls the code made: names and outcomes only (never inputs or outputs). */
  readonly toolCalls?: readonly { readonly tool: string; readonly status: string }[];
  /** The failure code, when it failed with one. */
  readonly errorCode?: SandboxCode;
}

/** Filter for {@link AuditLogger.search}. Bounds are exclusive. */
export interface AuditSearch {
  /** Only successful (`true`) or failed (`false`) executions. */
  success?: boolean;
  /** Only entries logged strictly after this instant (Date, epoch ms or ISO string). */
  after?: Date | number | string;
  /** Only entries logged strictly before this instant (Date, epoch ms or ISO string). */
  before?: Date | number | string;
  /** Keep at most this many matches: the newest ones, still in chronological order. */
  limit?: number;
}

/** Aggregates over the retained entries. */
export interface AuditStatistics {
  totalRuns: number;
  successCount: number;
  failureCount: number;
  /** `successCount / totalRuns`, 0 when empty. */
  successRate: number;
  /** Mean duration, in ms; 0 when empty. */
  avgDuration: number;
  /** Sum of `memoryUsed`, in bytes. */
  totalMemoryUsed: number;
}

/** Options of {@link AuditLogger}. */
export interface AuditLoggerOptions {
  /** Called synchronously with each new entry, after it is stored; exceptions propagate to `log`'s caller. */
  onLog?: (entry: AuditEntry) => void;
  /** Entries kept; the oldest is dropped beyond this (a ring, grown on demand). Default 10 000. */
  maxEntries?: number;
  /**
   * UTF-8 bytes of an entry's `error` text kept; longer text is cut (never
   * mid-character) and ends with `[output truncated at N bytes]`. Bounds the
   * log's memory when guests throw huge messages. Default 4096.
   */
  maxErrorBytes?: number;
  /** Source of "now" in epoch ms. Default `Date.now`. */
  clock?: Clock;
}

/** The part of a {@link SandboxResult} the logger reads. */
export type AuditedResult = Pick<
  SandboxResult,
  "success" | "duration" | "memoryUsed" | "error" | "errorCode"
>;

const DEFAULT_MAX_ENTRIES = 10_000;
const DEFAULT_MAX_ERROR_BYTES = 4096;

/** First 16 hex characters of the SHA-256 of `code` (UTF-8). */
export function hashCode(code: string): string {
  return createHash("sha256").update(code, "utf8").digest("hex").slice(0, 16);
}

/**
 * Keeps a bounded, in-memory record of executions: when, a hash of the code
 * (never the code), how long, whether it worked and how much heap it used.
 */
export class AuditLogger {
  /** Retained entries; grows up to `capacity`, then wraps (oldest at `start`). */
  private ring: AuditEntry[] = [];
  private times: number[] = [];
  private readonly capacity: number;
  private readonly maxErrorBytes: number;
  private start = 0;
  private count = 0;
  private readonly onLog: ((entry: AuditEntry) => void) | undefined;
  private readonly clock: Clock;
  /** The last code hashed and its hash: a program run again is not hashed again. */
  private lastHashed: { code: string; hash: string } | undefined;

  constructor(options: AuditLoggerOptions = {}) {
    this.capacity = positiveInteger("maxEntries", options.maxEntries ?? DEFAULT_MAX_ENTRIES, "10000");
    this.maxErrorBytes = positiveInteger(
      "maxErrorBytes",
      options.maxErrorBytes ?? DEFAULT_MAX_ERROR_BYTES,
      "4096",
    );
    this.onLog = optionalFunction("onLog", options.onLog);
    this.clock = optionalFunction("clock", options.clock) ?? Date.now;
  }

  private hashOf(code: string): string {
    if (this.lastHashed?.code !== code) this.lastHashed = { code, hash: hashCode(code) };
    return this.lastHashed.hash;
  }

  /** How many entries are retained at most. */
  get maxEntries(): number {
    return this.capacity;
  }

  /** Record one execution of `code` and return the stored entry. */
  log(
    code: string,
    result: AuditedResult,
    engine?: EngineName,
    toolCalls?: readonly { tool: string; status: string }[],
  ): AuditEntry {
    const now = this.clock();
    const entry: {
      -readonly [K in keyof AuditEntry]: AuditEntry[K];
    } = {
      timestamp: new Date(now).toISOString(),
      codeHash: this.hashOf(code),
      duration: result.duration,
      success: result.success,
      memoryUsed: result.memoryUsed ?? 0,
    };
    if (result.error !== undefined) entry.error = truncateOutput(String(result.error), this.maxErrorBytes);
    if (engine !== undefined) entry.engine = engine;
    if (result.errorCode !== undefined) entry.errorCode = result.errorCode;
    if (toolCalls !== undefined && toolCalls.length > 0) {
      entry.toolCalls = Object.freeze(
        toolCalls
          .slice(0, MAX_AUDITED_TOOL_CALLS)
          .map((call) =>
            Object.freeze({ tool: String(call.tool).slice(0, 128), status: String(call.status) }),
          ),
      );
    }
    const frozen: AuditEntry = Object.freeze(entry);

    if (this.count < this.capacity) {
      // Still filling: `start` is 0, append.
      this.ring.push(frozen);
      this.times.push(now);
      this.count++;
    } else {
      this.ring[this.start] = frozen;
      this.times[this.start] = now;
      this.start = (this.start + 1) % this.capacity;
    }

    this.onLog?.(frozen);
    return frozen;
  }

  /** Every retained entry, oldest first. */
  getEntries(): AuditEntry[] {
    const out: AuditEntry[] = [];
    this.forEach((entry) => {
      out.push(entry);
    });
    return out;
  }

  /** Retained entries matching `query`, oldest first. */
  search(query: AuditSearch = {}): AuditEntry[] {
    const after = query.after === undefined ? undefined : toEpochMs(query.after, "after");
    const before = query.before === undefined ? undefined : toEpochMs(query.before, "before");
    const limit = query.limit;
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_OPTIONS,
        `AuditLogger.search: limit must be a non-negative integer (got ${String(limit)})`,
        { details: { field: "limit" } },
      );
    }
    const out: AuditEntry[] = [];
    this.forEach((entry, time) => {
      if (query.success !== undefined && entry.success !== query.success) return;
      if (after !== undefined && !(time > after)) return;
      if (before !== undefined && !(time < before)) return;
      out.push(entry);
    });
    return limit === undefined || out.length <= limit ? out : out.slice(out.length - limit);
  }

  /** Aggregates over the retained entries. */
  getStatistics(): AuditStatistics {
    let successCount = 0;
    let totalDuration = 0;
    let totalMemoryUsed = 0;
    this.forEach((entry) => {
      if (entry.success) successCount++;
      totalDuration += entry.duration;
      totalMemoryUsed += entry.memoryUsed;
    });
    const totalRuns = this.count;
    return {
      totalRuns,
      successCount,
      failureCount: totalRuns - successCount,
      successRate: totalRuns === 0 ? 0 : successCount / totalRuns,
      avgDuration: totalRuns === 0 ? 0 : totalDuration / totalRuns,
      totalMemoryUsed,
    };
  }

  /** Drop every entry. */
  clear(): void {
    this.ring = [];
    this.times = [];
    this.start = 0;
    this.count = 0;
  }

  private forEach(visit: (entry: AuditEntry, epochMs: number) => void): void {
    for (let i = 0; i < this.count; i++) {
      const slot = (this.start + i) % this.capacity;
      const entry = this.ring[slot];
      if (entry !== undefined) visit(entry, this.times[slot] ?? 0);
    }
  }
}

function toEpochMs(value: Date | number | string, field: string): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === "number" ? value : Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      `AuditLogger.search: ${field} must be a Date, epoch ms or ISO 8601 string (got ${JSON.stringify(String(value))})`,
      { details: { field } },
    );
  }
  return ms;
}

function positiveInteger(field: string, value: number, example: string): number {
  if (Number.isSafeInteger(value) && value >= 1) return value;
  throw new SandboxError(
    SANDBOX_CODES.INVALID_CONFIG,
    `AuditLogger: ${field} must be a positive integer (got ${String(value)}); pass e.g. ${example}`,
    { details: { field } },
  );
}

function optionalFunction<T>(field: string, value: T | undefined): T | undefined {
  if (value === undefined || typeof value === "function") return value;
  throw new SandboxError(
    SANDBOX_CODES.INVALID_CONFIG,
    `AuditLogger: ${field} must be a function (got ${value === null ? "null" : typeof value})`,
    { details: { field } },
  );
}
