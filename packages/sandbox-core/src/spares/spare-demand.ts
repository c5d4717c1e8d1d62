import { SANDBOX_CODES, SandboxError } from "../error-codes/index.js";

/** How long a burst of demand is remembered, in ms: the peak of this window and of the one before count. */
export const DEMAND_WINDOW_MS = 5_000;

/** The most spares any engine keeps, whatever `maxSpares` asks (each is a booted worker or child). */
export const MAX_SPARES_CAP = 64;

/**
 * Ready spares an engine keeps at most by default. Not tied to the number of
 * cores: spares serve bursts of calls, and a burst is as wide as the callers
 * make it (measured, 2 cores: a burst of 4 worker runs after an idle spell
 * waits 77 ms at the median with 1 spare, 44 ms with 2, 3 ms with 4).
 */
export const DEFAULT_MAX_SPARES = 4;

/**
 * Check an engine's `maxSpares` option: an integer from 0 (no spares) to
 * {@link MAX_SPARES_CAP}; `undefined` gives {@link DEFAULT_MAX_SPARES}.
 * @throws SandboxError `SANDBOX_INVALID_CONFIG` naming the engine, the field and the reason.
 */
export function parseMaxSpares(input: unknown, engine: string): number {
  if (input === undefined) return DEFAULT_MAX_SPARES;
  if (typeof input !== "number" || !Number.isInteger(input) || input < 0 || input > MAX_SPARES_CAP) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `Invalid ${engine} option maxSpares: expected an integer from 0 to ${MAX_SPARES_CAP} (got ${typeof input === "string" ? JSON.stringify(input) : String(input)})`,
    );
  }
  return input;
}

/** Options of {@link SpareDemand}. */
export interface SpareDemandOptions {
  /** Spares kept while there is no demand (default 1; 0 with `max` 0). */
  min?: number;
  /** Spares kept at most. */
  max: number;
  /** How long a burst is remembered, in ms (default {@link DEMAND_WINDOW_MS}). */
  windowMs?: number;
  /** The clock, in ms (default `performance.now`); tests pass their own. */
  now?: () => number;
}

/**
 * How many ready spares (booted workers or children waiting for a run) an
 * engine should keep: as many as the most runs that were in flight at once
 * lately — in this window or the one before — between `min` and `max`. A
 * burst of four runs after an idle spell then finds four spares the next
 * time, and when the bursts stop the number falls back to `min` within two
 * windows. Pure bookkeeping: the engine boots and retires the spares.
 */
export class SpareDemand {
  private readonly min: number;
  private readonly max: number;
  private readonly windowMs: number;
  private readonly now: () => number;
  private inFlight = 0;
  private peak = 0;
  private previousPeak = 0;
  private windowStart: number;

  constructor(options: SpareDemandOptions) {
    this.max = Math.max(0, Math.floor(options.max));
    this.min = Math.min(this.max, Math.max(0, Math.floor(options.min ?? 1)));
    this.windowMs = options.windowMs ?? DEMAND_WINDOW_MS;
    this.now = options.now ?? (() => performance.now());
    this.windowStart = this.now();
  }

  /** A run took a worker or child. */
  started(): void {
    this.roll();
    this.inFlight++;
    if (this.inFlight > this.peak) this.peak = this.inFlight;
  }

  /** A run that {@link started} ended. */
  ended(): void {
    this.roll();
    if (this.inFlight > 0) this.inFlight--;
  }

  /** Spares wanted now. */
  target(): number {
    this.roll();
    return Math.min(this.max, Math.max(this.min, this.peak, this.previousPeak));
  }

  /** Runs in flight now. */
  get running(): number {
    return this.inFlight;
  }

  private roll(): void {
    const elapsed = Math.floor((this.now() - this.windowStart) / this.windowMs);
    if (elapsed < 1) return;
    // A window with nothing started peaks at what was still running through it.
    this.previousPeak = elapsed === 1 ? this.peak : this.inFlight;
    this.peak = this.inFlight;
    this.windowStart += elapsed * this.windowMs;
  }
}
