import { describe, expect, it } from "vitest";
import { contextDeclarations } from "./context-declarations.js";

describe("contextDeclarations", () => {
  it("types each global from its value", () => {
    expect(
      contextDeclarations({
        n: 41,
        s: "x",
        b: true,
        nothing: null,
        list: [1, 2],
        mixed: [1, "a"],
        empty: [],
        user: { name: "ada", tags: ["x"], "odd key": 1 },
        when: new Date(0),
        fn: () => 1,
      }),
    ).toBe(
      [
        "declare const n: number;",
        "declare const s: string;",
        "declare const b: boolean;",
        "declare const nothing: null;",
        "declare const list: number[];",
        "declare const mixed: (number | string)[];",
        "declare const empty: unknown[];",
        'declare const user: { "name": string; "tags": string[]; "odd key": number };',
        "declare const when: Date;",
        "declare const fn: any;",
      ].join("\n"),
    );
  });

  it("skips names that are not identifiers, and nothing gives nothing", () => {
    expect(contextDeclarations({ "not-a-name": 1, ok: 2 })).toBe("declare const ok: number;");
    expect(contextDeclarations(undefined)).toBe("");
    expect(contextDeclarations({})).toBe("");
  });
});
