import { SANDBOX_CODES, SandboxError } from "../error-codes/sandbox-codes.js";
import type { Clock } from "../types/sandbox-types.js";
import { truncateOutput } from "./output-budget.js";

// Mirrors SANDBOX_DEFAULTS without importing the schemas (and zod) into this light subpath.
const DEFAULT_RATE_LIMIT_WINDOW_MS = 60_000;
const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

/** Options of {@link ResourceLimiter}; the names match `SandboxConfig`. */
export interface ResourceLimiterOptions {
  /** Executions allowed per sliding window; omit for unlimited. */
  maxExecutionsPerWindow?: number | undefined;
  /** Length of the sliding window, in ms. Default 60 000. */
  rateLimitWindow?: number;
  /** Cap applied by {@link ResourceLimiter.truncateOutput}, in UTF-8 bytes. Default 1 MiB. */
  maxOutputSize?: number;
  /** Source of "now" in epoch ms. Default `Date.now`. */
  clock?: Clock;
}

/**
 * Rate limiting over a sliding window plus output truncation. An execution
 * recorded at time `t` counts against the window until `t + rateLimitWindow`.
 *
 * @example
 * const limiter = new ResourceLimiter({ maxExecutionsPerWindow: 10, rateLimitWindow: 60_000 });
 * limiter.checkRateLimit(); // throws SANDBOX_RATE_LIMITED when 10 ran in the last minute
 * limiter.recordExecution();
 */
export class ResourceLimiter {
  /** Executions allowed per window, or `undefined` for unlimited. */
  readonly maxExecutionsPerWindow: number | undefined;
  /** Window length, in ms. */
  readonly rateLimitWindow: number;
  /** Output cap, in UTF-8 bytes. */
  readonly maxOutputSize: number;
  private readonly clock: Clock;
  /** Start times (epoch ms) of executions still inside the window, oldest first, from `head`. */
  private stamps: number[] = [];
  private head = 0;
  private total = 0;

  constructor(options: ResourceLimiterOptions = {}) {
    this.maxExecutionsPerWindow = options.maxExecutionsPerWindow;
    this.rateLimitWindow = options.rateLimitWindow ?? DEFAULT_RATE_LIMIT_WINDOW_MS;
    this.maxOutputSize = options.maxOutputSize ?? DEFAULT_MAX_OUTPUT_BYTES;
    if (options.clock !== undefined && typeof options.clock !== "function") {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `ResourceLimiter: clock must be a function returning epoch ms (got ${options.clock === null ? "null" : typeof options.clock})`,
        { details: { field: "clock" } },
      );
    }
    this.clock = options.clock ?? Date.now;
    if (this.maxExecutionsPerWindow !== undefined)
      positiveInteger("maxExecutionsPerWindow", this.maxExecutionsPerWindow);
    positiveInteger("rateLimitWindow", this.rateLimitWindow);
    positiveInteger("maxOutputSize", this.maxOutputSize);
  }

  /**
   * Throw `SANDBOX_RATE_LIMITED` when `maxExecutionsPerWindow` executions were
   * recorded within the last `rateLimitWindow` ms; otherwise return.
   */
  checkRateLimit(): void {
    const limit = this.maxExecutionsPerWindow;
    if (limit === undefined) return;
    const now = this.clock();
    this.prune(now);
    const inWindow = this.stamps.length - this.head;
    if (inWindow < limit) return;
    // The slot that frees first belongs to the execution that is `limit` back from the newest.
    const freeingStamp = this.stamps[this.stamps.length - limit] ?? now;
    const retryAfterMs = Math.max(0, freeingStamp + this.rateLimitWindow - now);
    throw new SandboxError(
      SANDBOX_CODES.RATE_LIMITED,
      `Rate limit reached: ${inWindow} of ${limit} executions allowed per ${this.rateLimitWindow} ms window are used; ` +
        `the next slot frees in ${retryAfterMs} ms. Retry later or raise maxExecutionsPerWindow`,
      { details: { limit, windowMs: this.rateLimitWindow, inWindow, retryAfterMs } },
    );
  }

  /** Count one execution now. */
  recordExecution(): void {
    const now = this.clock();
    this.prune(now);
    this.stamps.push(now);
    this.total++;
  }

  /** Executions recorded since construction or the last {@link reset}. */
  getTotalExecutions(): number {
    return this.total;
  }

  /** Executions recorded within the last `rateLimitWindow` ms. */
  getWindowExecutions(): number {
    this.prune(this.clock());
    return this.stamps.length - this.head;
  }

  /** Forget every recorded execution. */
  reset(): void {
    this.stamps = [];
    this.head = 0;
    this.total = 0;
  }

  /** Cut `text` to `maxOutputSize` UTF-8 bytes and append `[output truncated at N bytes]` when it is longer. */
  truncateOutput(text: string): string {
    return truncateOutput(text, this.maxOutputSize);
  }

  private prune(now: number): void {
    const cutoff = now - this.rateLimitWindow;
    while (this.head < this.stamps.length && (this.stamps[this.head] ?? cutoff) <= cutoff) this.head++;
    // Compact once the dead prefix dominates, so memory stays proportional to the window.
    if (this.head > 0 && this.head * 2 >= this.stamps.length) {
      this.stamps = this.stamps.slice(this.head);
      this.head = 0;
    }
  }
}

function positiveInteger(field: string, value: number): void {
  if (Number.isSafeInteger(value) && value > 0) return;
  throw new SandboxError(
    SANDBOX_CODES.INVALID_CONFIG,
    `ResourceLimiter: ${field} must be a positive integer (got ${typeof value === "number" || typeof value === "bigint" ? String(value) : typeof value})`,
    { details: { field } },
  );
}
