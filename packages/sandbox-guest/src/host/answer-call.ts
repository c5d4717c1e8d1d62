import { createHostCodec } from "@suaveplan/sandbox-kernel";
import { described } from "../outcome/to-sandbox-result.js";
import type { CallReply, GuestCall } from "../protocol/protocol.js";

const codec = createHostCodec();

/** What answers a guest's `tools.<name>(input)` calls on the host (the facade's tools layer builds one). */
export interface HostCallHandler {
  /** The names the guest's `tools` global offers. */
  readonly names: readonly string[];
  /**
   * Run one call. Resolve with the output (copied into the guest by the codec)
   * or reject; a rejection's `name`, `message` and `tool` (when strings) are
   * all the guest sees — never a host object or stack. `input` is
   * `Symbol.for("suaveplan.sandbox.tool-input-too-large")` when the guest's
   * input was past `maxCallBytes` and was not sent: refuse the call.
   */
  call(name: string, input: unknown, id: string): Promise<unknown>;
  /** Largest output the guest may receive, in bytes (codec text × 2). Default 1 MiB. */
  readonly maxReplyBytes?: number;
}

const DEFAULT_MAX_REPLY_BYTES = 1024 * 1024;

/** What the guest kernel sends instead of an input past `maxCallBytes` (not codec text). */
const INPUT_TOO_LARGE_TEXT = '["!too-large"]';
/** Handed to `call` for such an input (sandbox-tools' `TOOL_INPUT_TOO_LARGE`), so the refusal names the tool and is journaled. */
const TOOL_INPUT_TOO_LARGE = Symbol.for("suaveplan.sandbox.tool-input-too-large");

/**
 * Answer one {@link GuestCall}: decode the input with the host codec, run the
 * handler, encode the output (or the failure as `{ name, message, tool }`).
 * Never rejects; the driver drops the reply if the run ended meanwhile.
 */
export async function answerCall(call: GuestCall, handler: HostCallHandler): Promise<CallReply> {
  let input: unknown;
  try {
    input = call.text === INPUT_TOO_LARGE_TEXT ? TOOL_INPUT_TOO_LARGE : codec.decode(call.text);
  } catch {
    return refusal(call, "TypeError", "the call's input could not be decoded");
  }
  let output: unknown;
  try {
    output = await handler.call(call.name, input, String(call.id));
  } catch (error) {
    const { name, message, tool } = describeRejection(error);
    return {
      id: call.id,
      ok: false,
      text: JSON.stringify(tool === undefined ? { name, message } : { name, message, tool }),
    };
  }
  try {
    return {
      id: call.id,
      ok: true,
      text: codec.encode(output, "output", handler.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES),
    };
  } catch (error) {
    if (codec.isNotTransferable(error)) {
      return refusal(
        call,
        "ToolError",
        `${error.path}: ${described(error.what)} cannot be sent into the sandbox`,
        call.name,
      );
    }
    return refusal(call, "ToolError", "the output could not be copied into the sandbox", call.name);
  }
}

function refusal(call: GuestCall, name: string, message: string, tool?: string): CallReply {
  return {
    id: call.id,
    ok: false,
    text: JSON.stringify(tool === undefined ? { name, message } : { name, message, tool }),
  };
}

/** Only string fields of a rejection cross; anything else becomes a generic text. */
function describeRejection(error: unknown): { name: string; message: string; tool: string | undefined } {
  if (typeof error === "object" && error !== null) {
    const { name, message, tool } = error as { name?: unknown; message?: unknown; tool?: unknown };
    return {
      name: typeof name === "string" && name !== "" ? name : "Error",
      message: typeof message === "string" ? message : "the host call failed",
      tool: typeof tool === "string" ? tool : undefined,
    };
  }
  return {
    name: "Error",
    message: typeof error === "string" ? error : "the host call failed",
    tool: undefined,
  };
}
