import { describe, expect, it } from "vitest";
import { preparedCodeFor, prepareGuestCode, withPreparedCode } from "./prepare-guest-code.js";

describe("prepareGuestCode model shapes", () => {
  it("names fenced code, with or without prose around it, at the first fence line", () => {
    expect(prepareGuestCode("```js\n2 + 3\n```").modelShape).toEqual({
      shape: "markdown-fence",
      reason:
        "the code is wrapped in Markdown fences (```); send the code without them, or pass it through normalizeModelCode()",
      line: 1,
    });
    const prose = prepareGuestCode("Here you go:\n\n~~~\nawait 1\n~~~");
    expect([prose.modelShape?.shape, prose.modelShape?.line, prose.syntaxError !== undefined]).toEqual([
      "markdown-fence",
      3,
      true,
    ]);
  });

  it("names a main that is declared and never called", () => {
    expect(prepareGuestCode("const main = async () => 42;").modelShape?.shape).toBe("uncalled-main");
    expect(prepareGuestCode("function main() { return 1 }").modelShape?.shape).toBe("uncalled-main");
  });

  it("leaves ordinary code, a called main and a lone function alone", () => {
    for (const code of [
      "function main() { return 1 }\nmain()",
      "const domain = 'main'; domain",
      "() => 1",
      "const t = `\\`\\`\\``; t",
      "export default 1",
    ]) {
      expect(prepareGuestCode(code).modelShape, code).toBeUndefined();
    }
  });
});

describe("handing prepared code down with the options", () => {
  it("an engine gets back what the facade prepared, only for that very code and only a record prepareGuestCode made", () => {
    const prepared = prepareGuestCode("await 1", { analyse: true });
    const options = withPreparedCode({ timeout: 5 }, prepared);
    const lookAlike = withPreparedCode({}, { ...prepared, source: "import('node:fs')" });
    expect({
      found: preparedCodeFor(options, "await 1") === prepared,
      otherCode: preparedCodeFor(options, "await 2"),
      lookAlike: preparedCodeFor(lookAlike, "await 1"),
      none: preparedCodeFor({ timeout: 5 }, "await 1"),
      keys: Object.keys(options),
      frozen: Object.isFrozen(prepared),
    }).toEqual({
      found: true,
      otherCode: undefined,
      lookAlike: undefined,
      none: undefined,
      keys: ["timeout"],
      frozen: true,
    });
  });
});
