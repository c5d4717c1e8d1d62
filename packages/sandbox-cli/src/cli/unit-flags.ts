import { readDuration, readSize, type UnitReading } from "@suaveplan/sandbox-core/schemas";
import { MAX_TIMER_MS } from "@suaveplan/sandbox-core/types";
import { InvalidArgumentError } from "commander";

const BARE_NUMBER = /^\s*\d+(?:\.\d+)?\s*$/;

/**
 * Why `text` is not a positive duration (ms) or size (bytes) up to `max`, or the value.
 * A bare number is refused: earlier releases read `--timeout 30` as 30 ms in `run` and
 * 30 s in `exec`, and `--memory 64` as MiB, so guessing now would change what old scripts mean.
 */
export function readUnitFlag(
  text: string,
  kind: "duration" | "size",
  max: number,
): { ok: true; value: number } | { ok: false; reason: string } {
  if (BARE_NUMBER.test(text)) {
    const n = text.trim();
    const examples = kind === "duration" ? `${n}ms or ${n}s` : `${n}MiB or ${n}KiB`;
    return {
      ok: false,
      reason: `needs a unit, e.g. ${examples} (a bare number is refused: earlier releases read it in different units)`,
    };
  }
  const reading: UnitReading = kind === "duration" ? readDuration(text) : readSize(text);
  if (!reading.ok) return reading;
  if (reading.value <= 0) return { ok: false, reason: "must be more than 0" };
  if (reading.value > max) {
    return { ok: false, reason: `must be at most ${max} ${kind === "duration" ? "ms" : "bytes"}` };
  }
  return reading;
}

// Commander's message names the flag and the value ("option '--timeout <duration>' argument '30' is invalid."); this adds why.
function flagParser(kind: "duration" | "size", max: number) {
  return (text: string): number => {
    const reading = readUnitFlag(text, kind, max);
    if (reading.ok) return reading.value;
    throw new InvalidArgumentError(`It ${reading.reason}.`);
  };
}

/** A commander parser of a duration flag with its unit (`250ms`, `30s`, `2m`, `1h`) → ms. */
export function durationFlag(max: number = MAX_TIMER_MS): (text: string) => number {
  return flagParser("duration", max);
}

/** A commander parser of a size flag with its unit (`512KiB`, `64MiB`, `64MB`) → bytes. */
export function sizeFlag(max: number = Number.MAX_SAFE_INTEGER): (text: string) => number {
  return flagParser("size", max);
}
