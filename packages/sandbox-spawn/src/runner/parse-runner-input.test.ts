import { describe, expect, it } from "vitest";
import { parseRunnerInput } from "./parse-runner-input.js";

// The request's fields are checked by sandbox-guest's readExecutionRequest (tested there); the runner adds the JSON.
describe("parseRunnerInput", () => {
  it.each(["nope", "[]", "null", "1"])("refuses %j on stdin: not one JSON object", (text) => {
    expect(() => parseRunnerInput(text)).toThrow(new Error("request: stdin is not one JSON object"));
  });

  it("hands a JSON object to the shared check, which names the first bad field", () => {
    expect(() => parseRunnerInput('{"code":1}')).toThrow(new Error("request.code: must be a string"));
  });
});
