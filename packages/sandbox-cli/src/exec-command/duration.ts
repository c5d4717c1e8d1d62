/** The largest timer Node honours (ms); a larger delay would fire at once. */
export const MAX_DURATION_MS = 2_147_483_647;

const UNITS: Readonly<Record<string, number>> = Object.freeze({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 });

/**
 * Parse a duration as `timeout(1)` reads one, plus milliseconds: a positive
 * number with an optional unit — `ms`, `s` (the default), `m` or `h` — e.g.
 * `500ms`, `30`, `1.5s`, `10m`. Returns milliseconds, or `undefined` when the
 * text is not a duration, is zero, or exceeds {@link MAX_DURATION_MS}.
 */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (match === null) return undefined;
  const ms = Math.round(Number(match[1]) * (UNITS[match[2] ?? "s"] as number));
  return ms > 0 && ms <= MAX_DURATION_MS ? ms : undefined;
}
