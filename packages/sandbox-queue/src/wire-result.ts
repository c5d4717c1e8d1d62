import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { failure, type SandboxResult } from "@suaveplan/sandbox-core/types";
import type { createHostCodec } from "@suaveplan/sandbox-guest";
import type { WireResult } from "./protocol.js";

type Codec = ReturnType<typeof createHostCodec>;

/** A result ready for JSON: its value as codec text, so what `JSON` cannot hold crosses unchanged. */
export function toWire(result: SandboxResult, codec: Codec): WireResult {
  if (!result.success) return result;
  const { result: value, ...rest } = result;
  try {
    return { ...rest, resultText: codec.encode(value, "result", Number.MAX_SAFE_INTEGER) };
  } catch {
    // The engine copied the value out already, so it is transferable; this is a bug, said as one.
    return failure(SANDBOX_CODES.ENGINE_FAILED, "The worker could not encode the result", {
      duration: result.duration,
      logs: result.logs,
    });
  }
}

/** The result a worker sent, with its value decoded. */
export function fromWire(wire: WireResult, codec: Codec): SandboxResult {
  if (!wire.success) return wire as SandboxResult;
  const { resultText, ...rest } = wire;
  return {
    ...rest,
    result: resultText === undefined ? undefined : codec.decode(resultText),
  } as SandboxResult;
}
