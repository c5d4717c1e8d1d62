import type { CallReply } from "@suaveplan/sandbox-guest/realm";

/**
 * One stdin line after the request as the host's `CallReply`
 * (`{ id, ok, text }`), or `undefined` when it is not one — such a line is
 * ignored, and the call it may have meant stays pending until the deadline.
 */
export function parseCallReply(line: string): CallReply | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const { id, ok, text } = raw as Record<string, unknown>;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) return undefined;
  if (typeof ok !== "boolean" || typeof text !== "string") return undefined;
  return { id, ok, text };
}
