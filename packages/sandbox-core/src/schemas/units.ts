import { z } from "zod";
import { SANDBOX_CODES, type SandboxCode, SandboxError } from "../error-codes/sandbox-codes.js";
import { MAX_TIMER_MS } from "../types/sandbox-types.js";

// Our own parser, not `ms` or `bytes`: `ms` reads "-1s" as -1000 and a bare "30" as 30 ms,
// and `bytes` reads "64MB" as 64 MiB and "64MiB" as 64 bytes, both without an error. Here a
// string always carries its unit, every unit means what its standard says, and bad text is refused.

/** Duration units and their length in ms. */
export const DURATION_UNITS: Readonly<Record<string, number>> = Object.freeze({
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
});

/** Size units and their size in bytes: IEC binary (KiB = 1024) and SI decimal (kB = 1000), each with its true meaning. */
export const SIZE_UNITS: Readonly<Record<string, number>> = Object.freeze({
  B: 1,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  kB: 1000,
  MB: 1000 ** 2,
  GB: 1000 ** 3,
});

/** A duration: a number of milliseconds, or a string with its unit (`"250ms"`, `"1.5s"`, `"2m"`, `"1h"`). */
export type DurationInput = number | string;
/** A size: a number of bytes, or a string with its unit (`"512KiB"`, `"64MiB"`, `"1GiB"`, `"64MB"` = 64 000 000). */
export type SizeInput = number | string;

/** A value read, or why it cannot be (a sentence fragment without the field or the value). */
export type UnitReading = { ok: true; value: number } | { ok: false; reason: string };

const AMOUNT_AND_UNIT = /^(\d+(?:\.\d+)?)\s?([A-Za-z]*)$/;

// Spellings other tools use for something else, so we refuse them rather than guess.
const SIZE_HINTS: Readonly<Record<string, string>> = Object.freeze({
  b: "B",
  k: "KiB or kB",
  kb: "KiB (1024 bytes) or kB (1000 bytes)",
  KB: "KiB (1024 bytes) or kB (1000 bytes)",
  m: "MiB or MB",
  M: "MiB or MB",
  mb: "MiB (1048576 bytes) or MB (1000000 bytes)",
  Mb: "MiB (1048576 bytes) or MB (1000000 bytes)",
  mib: "MiB",
  g: "GiB or GB",
  G: "GiB or GB",
  gb: "GiB or GB",
  gib: "GiB",
  kib: "KiB",
  bytes: "B",
  kilobytes: "kB or KiB",
  megabytes: "MB or MiB",
  gigabytes: "GB or GiB",
});
const DURATION_HINTS: Readonly<Record<string, string>> = Object.freeze({
  sec: "s",
  secs: "s",
  second: "s",
  seconds: "s",
  minute: "m",
  minutes: "m",
  hour: "h",
  hours: "h",
  min: "m",
  mins: "m",
  hr: "h",
  S: "s",
  MS: "ms",
  Ms: "ms",
  H: "h",
});

function read(
  value: unknown,
  units: Readonly<Record<string, number>>,
  hints: Readonly<Record<string, string>>,
  kind: "duration" | "size",
): UnitReading {
  const base = kind === "duration" ? "milliseconds" : "bytes";
  const examples = kind === "duration" ? '"250ms", "30s", "2m"' : '"512KiB", "64MiB", "1GiB"';
  const unitList = Object.keys(units).join(", ");
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return { ok: false, reason: `must be a finite number of ${base}` };
    if (value < 0) return { ok: false, reason: `must not be negative` };
    if (!Number.isInteger(value)) return { ok: false, reason: `must be a whole number of ${base}` };
    return { ok: true, value };
  }
  if (typeof value !== "string") {
    return { ok: false, reason: `must be a number of ${base} or a ${kind} string such as ${examples}` };
  }
  const text = value.trim();
  const match = AMOUNT_AND_UNIT.exec(text);
  if (match === null) {
    const why = /^[-−]/.test(text) ? "must not be negative" : `is not a ${kind}`;
    return { ok: false, reason: `${why}; write a number and a unit (${unitList}), e.g. ${examples}` };
  }
  const amount = Number(match[1]);
  const unit = match[2] ?? "";
  if (unit === "") {
    return {
      ok: false,
      reason: `needs a unit (${unitList}): a string must say which, e.g. "${match[1]}${kind === "duration" ? "ms" : "MiB"}"; a plain number is read as ${base}`,
    };
  }
  const factor = units[unit];
  if (factor === undefined) {
    const hint = hints[unit];
    return {
      ok: false,
      reason: `has an unknown unit "${unit}"${hint === undefined ? "" : ` (did you mean ${hint}?)`}; units are ${unitList}`,
    };
  }
  // Scale the digits as an integer, then divide once: "1.1s" is exactly 1100, not 1100.0000000000002.
  const decimals = (match[1]?.split(".")[1] ?? "").length;
  const result = (Number(match[1]?.replace(".", "")) * factor) / 10 ** decimals;
  if (!Number.isInteger(result)) {
    return { ok: false, reason: `is not a whole number of ${base} (${amount} ${unit} = ${result} ${base})` };
  }
  if (!Number.isSafeInteger(result)) return { ok: false, reason: `is too large` };
  return { ok: true, value: result };
}

/** Read a duration (number of ms, or string with a unit) without throwing. */
export function readDuration(value: unknown): UnitReading {
  return read(value, DURATION_UNITS, DURATION_HINTS, "duration");
}

/** Read a size (number of bytes, or string with a unit) without throwing. */
export function readSize(value: unknown): UnitReading {
  return read(value, SIZE_UNITS, SIZE_HINTS, "size");
}

function orThrow(reading: UnitReading, value: unknown, field: string, code: SandboxCode): number {
  if (reading.ok) return reading.value;
  throw new SandboxError(code, `${field}: ${JSON.stringify(value) ?? String(value)} ${reading.reason}`);
}

/**
 * A duration in ms: a number is milliseconds already; a string needs its unit
 * (`ms`, `s`, `m`, `h`; a decimal amount is fine when the result is a whole number of ms).
 * @throws SandboxError (`code`, default `SANDBOX_INVALID_CONFIG`) naming `field` and the value.
 */
export function parseDuration(
  value: unknown,
  field: string,
  code: SandboxCode = SANDBOX_CODES.INVALID_CONFIG,
): number {
  return orThrow(readDuration(value), value, field, code);
}

/**
 * A size in bytes: a number is bytes already; a string needs its unit (`B`,
 * `KiB`/`MiB`/`GiB` = powers of 1024, `kB`/`MB`/`GB` = powers of 1000).
 * @throws SandboxError (`code`, default `SANDBOX_INVALID_CONFIG`) naming `field` and the value.
 */
export function parseSize(
  value: unknown,
  field: string,
  code: SandboxCode = SANDBOX_CODES.INVALID_CONFIG,
): number {
  return orThrow(readSize(value), value, field, code);
}

function unitSchema(reader: (value: unknown) => UnitReading, max: number, description: string) {
  const whole = z.number().int().positive().max(max);
  // The union's number is not `.int()`: zod reports a non-integer as a type mismatch, which a union
  // would turn into a bare "Invalid input"; the pipe below says "expected int" instead.
  return z
    .union([z.number().positive().max(max), z.string()])
    .transform((value, ctx) => {
      if (typeof value === "number") return value;
      const reading = reader(value);
      if (reading.ok) return reading.value;
      ctx.addIssue({ code: "custom", message: reading.reason });
      return z.NEVER;
    })
    .pipe(whole)
    .meta({ description });
}

/** Zod schema of a positive duration: ms as a number, or a string with its unit; outputs whole ms up to `max`. */
export function durationSchema(max: number = MAX_TIMER_MS) {
  return unitSchema(
    readDuration,
    max,
    'milliseconds, or a string with its unit: "250ms", "1.5s", "2m", "1h"',
  );
}

/** Zod schema of a positive size: bytes as a number, or a string with its unit; outputs whole bytes up to `max`. */
export function sizeSchema(max: number = Number.MAX_SAFE_INTEGER) {
  return unitSchema(
    readSize,
    max,
    'bytes, or a string with its unit: "512KiB", "64MiB", "1GiB" (powers of 1024) or "500kB", "64MB", "1GB" (powers of 1000)',
  );
}

/** `8388608` → `"8 MiB"` (whole units only), else `"<n> bytes"`: for error messages. */
export function formatSize(bytes: number): string {
  for (const unit of ["GiB", "MiB", "KiB"] as const) {
    const size = SIZE_UNITS[unit] as number;
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return bytes === 1 ? "1 byte" : `${bytes} bytes`;
}

/**
 * Why `bytes` cannot be `engine`'s memory limit (below its `minMiB`), naming
 * the field and the likely slip of a MiB count written as bytes; undefined
 * when it can. Engines refuse such a limit rather than raise it behind the
 * caller's back.
 */
export function memoryLimitBelowMinimum(
  bytes: number,
  field: string,
  engine: string,
  minMiB: number,
): string | undefined {
  const min = minMiB * (SIZE_UNITS.MiB as number);
  if (bytes >= min) return undefined;
  const hint =
    bytes >= minMiB && bytes <= 16_384 ? `did you mean "${bytes}MiB"?` : `give at least "${minMiB}MiB"`;
  return `${field}: ${formatSize(bytes)} is below the ${engine} engine's minimum of ${minMiB} MiB (${min} bytes); ${hint}`;
}
