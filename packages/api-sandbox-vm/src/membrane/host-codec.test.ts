import { describe, expect, it } from "vitest";
import { decodeGuestValue, encodeHostValue, SANDBOX_RAISED } from "./host-codec.js";

describe("host codec", () => {
  it("round-trips structured values, keeping cycles and shared references", () => {
    const shared = { s: 1 };
    const value: Record<string, unknown> = {
      list: [shared, shared, undefined, -0, Number.NaN, Number.NEGATIVE_INFINITY, 12n],
      when: new Date(Number.NaN),
      view: new DataView(new Uint8Array([9, 8]).buffer),
      nested: new Map([[new Set([1]), /x/y]]),
      ["__proto__"]: "not a prototype",
    };
    value.me = value;
    const back = decodeGuestValue(encodeHostValue(value)) as Record<string, unknown>;
    expect(back).toEqual(value);
    expect(back.me).toBe(back);
    const list = back.list as unknown[];
    expect(list[0]).toBe(list[1]);
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.hasOwn(back, "__proto__")).toBe(true);
  });

  it("never sends a host stack to the guest", () => {
    expect(JSON.parse(encodeHostValue(new TypeError("x")))).toEqual([
      "e",
      { name: "TypeError", message: "x" },
    ]);
  });

  it("marks errors the sandbox raised and keeps their guest stack", () => {
    const error = decodeGuestValue(
      JSON.stringify([
        "e",
        {
          name: "SuaveplanError",
          message: "m (C)",
          code: "C",
          sandbox: true,
          stack: "SuaveplanError: m (C)\n    at f (sandbox:/plugin/p.mjs:1:1)",
        },
      ]),
    ) as Error & { code: string; [SANDBOX_RAISED]?: true };
    expect([error.name, error.code, error[SANDBOX_RAISED], error.stack]).toEqual([
      "SuaveplanError",
      "C",
      true,
      "SuaveplanError: m (C)\n    at f (sandbox:/plugin/p.mjs:1:1)",
    ]);
  });

  it("refuses functions, symbols and promises", () => {
    for (const bad of [() => 1, Symbol("s"), Promise.resolve(), new WeakMap()]) {
      expect(() => encodeHostValue({ bad })).toThrow(
        expect.objectContaining({ code: "SAND_VM_DATA_CLONE_FAILED" }),
      );
    }
  });
});
