import { describe, expect, it } from "vitest";
import { SANDBOX_CODES, SandboxError } from "../error-codes/index.js";
import { ResultStreamer } from "./index.js";

describe("ResultStreamer options", () => {
  it("refuses a flush interval setInterval cannot honour and a clock that is not a function", () => {
    for (const [field, options] of [
      ["flushIntervalMs", { flushIntervalMs: 2 ** 31 }],
      ["clock", { clock: 5 }],
      ["onListenerError", { onListenerError: "log" }],
    ] as const) {
      let caught: unknown;
      try {
        new ResultStreamer(options as never);
      } catch (error) {
        caught = error;
      }
      expect(caught, field).toBeInstanceOf(SandboxError);
      expect((caught as SandboxError).code).toBe(SANDBOX_CODES.INVALID_CONFIG);
      expect((caught as SandboxError).message).toContain(field);
    }
  });
});
