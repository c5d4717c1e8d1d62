import type { GuestOutcome } from "@suaveplan/sandbox-guest/realm";

const GUEST_ENDINGS = new Set<GuestOutcome["kind"]>(["value", "error", "syntax", "untransferable"]);

/**
 * Whether a run ended by the guest's own doing: a value, a throw, a syntax
 * error, a result that could not cross — not a timeout, a memory limit, a
 * cancel or a fault.
 */
export function endedByGuest(outcome: GuestOutcome): boolean {
  return GUEST_ENDINGS.has(outcome.kind);
}
