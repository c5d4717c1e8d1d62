import { inspect } from "node:util";
import { type ErrorRecord, GUEST_FILENAME } from "@suaveplan/sandbox-guest/realm";

/** Where isolated-vm appends the host's stack to an error it copied out of the isolate. */
const BOUNDARY = "\n    at (<isolated-vm boundary>)";
/** isolated-vm's text for a thrown object that is neither an Error nor a primitive (it copies nothing of it). */
const NOT_AN_ERROR =
  "An object was thrown from supplied code within isolated-vm, but that object was not an instance of `Error`.";
/** `at fn (sandbox.js:3:7)` or `at sandbox.js:3:7`: the innermost guest frame (the kernel's own rule). */
const LOCATION = new RegExp(
  `[ (]${GUEST_FILENAME.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:(\\d+):(\\d+)\\)?$`,
  "m",
);
/** `Unexpected token '=' [sandbox.js:2:7]`: how isolated-vm reports a compile error. */
const COMPILE_ERROR = /^(.*) \[[^\]\n]*:(\d+):(\d+)\]$/s;

/** True for isolated-vm's own "Script execution timed out." (a guest can write that text too: check the time). */
export function isTimeoutError(error: unknown): boolean {
  return error instanceof Error && error.message === "Script execution timed out.";
}

/**
 * The kernel's description of a rejection nobody handled, rebuilt from the
 * copy isolated-vm throws to the call that was running (isolated-vm 5 has no
 * unhandled-rejection hook): an Error keeps its name, message and the stack
 * the kernel formatted in the isolate (guest frames only; isolated-vm's
 * boundary and the host's frames cut off), a primitive is inspected. Any
 * other object crosses as isolated-vm's generic error and is described as such.
 */
export function describeRejection(reason: unknown): ErrorRecord {
  let record: ErrorRecord;
  if (reason instanceof Error) {
    if (reason.message === NOT_AN_ERROR) {
      record = {
        name: "",
        message: "an object that is not an Error (isolated-vm copies nothing more of it)",
        stack: "",
      };
    } else {
      const full = typeof reason.stack === "string" ? reason.stack : "";
      const cut = full.indexOf(BOUNDARY);
      const stack = cut === -1 ? full : full.slice(0, cut);
      record = { name: reason.name === "" ? "Error" : reason.name, message: reason.message, stack };
      const found = LOCATION.exec(stack);
      if (found !== null) {
        record.line = Number(found[1]);
        record.column = Number(found[2]);
      }
    }
  } else {
    record = { name: "", message: inspect(reason), stack: "" };
  }
  record.unhandledRejection = true;
  return record;
}

/** The SyntaxError of guest code that does not compile, with its line and column, or undefined for another failure. */
export function syntaxRecord(error: unknown): ErrorRecord | undefined {
  if (!(error instanceof Error) || error.name !== "SyntaxError") return undefined;
  const found = COMPILE_ERROR.exec(error.message);
  if (found === null) return { name: "SyntaxError", message: error.message, stack: "" };
  return {
    name: "SyntaxError",
    message: found[1] ?? error.message,
    stack: "",
    line: Number(found[2]),
    column: Number(found[3]),
  };
}

/** A host-side error's message, for fault text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
