import { createHostCodec, type NotTransferableRecord } from "@suaveplan/sandbox-kernel";
import { SAND_VM_CODES, VmSandboxError } from "../errors/sand-vm-codes.js";

/**
 * HOST side of the membrane: the kernel's value codec (`createHostCodec`), the very codec the
 * plugin's `plugin` profile runs in the guest (see `installCodec` in @suaveplan/sandbox-kernel for
 * the format). Values cross as JSON text of tagged nodes, so each side rebuilds them with its own
 * realm's constructors: plain data, `undefined`, `NaN`/`±Infinity`/`-0`, BigInt, Date, RegExp,
 * Map, Set, ArrayBuffer, typed arrays, DataView, Errors (name, message, stack, own keys, cause),
 * holes and cycles. This file only words the refusals as the plugin host always has
 * (`SAND_VM_DATA_CLONE_FAILED`), and marks the errors the sandbox itself raised.
 */

/** Marks errors that the sandbox itself raised inside the guest (as opposed to plugin throws). */
export const SANDBOX_RAISED: unique symbol = Symbol("suaveplan.sandboxRaised");

/** An error decoded from the guest. */
export interface DecodedGuestError extends Error {
  code?: string;
  [SANDBOX_RAISED]?: true;
}

// Host errors cross without their stack: guests never see host frames or paths.
const toGuest = createHostCodec();
const fromGuest = createHostCodec({ keepStacks: true });

/** Encode a host value for the guest. @throws VmSandboxError `SAND_VM_DATA_CLONE_FAILED`. */
export function encodeHostValue(value: unknown, root = "value"): string {
  try {
    return toGuest.encode(value, root, Number.POSITIVE_INFINITY);
  } catch (error) {
    if (!toGuest.isNotTransferable(error)) throw error;
    const { path, what } = error as NotTransferableRecord;
    throw new VmSandboxError(
      SAND_VM_CODES.DATA_CLONE_FAILED,
      `${path} (${what}) cannot be copied into the sandbox; pass plain data (objects, arrays, strings, numbers, bytes …)`,
      { details: { path, what } },
    );
  }
}

/**
 * Decode a guest payload into host values; `raised` marks a thrown error as the sandbox's own
 * (its `code` is one of the sandbox's). Never throws anything but a `VmSandboxError`: a malformed
 * or too deeply nested payload is `SAND_VM_DATA_CLONE_FAILED`.
 */
export function decodeGuestValue(text: string, raised = false): unknown {
  let value: unknown;
  try {
    value = fromGuest.decode(text);
  } catch (error) {
    // The kernel's decode says why in `reason` (`nested deeper than 1000 levels`, `bad base64` …).
    const reason = (error as { reason?: unknown } | null)?.reason;
    const why = typeof reason === "string" ? reason : "malformed";
    throw new VmSandboxError(
      SAND_VM_CODES.DATA_CLONE_FAILED,
      `a value from the sandbox could not be copied to the host (${why})`,
      { details: { reason: why } },
    );
  }
  if (raised && value instanceof Error) Object.defineProperty(value, SANDBOX_RAISED, { value: true });
  return value;
}
