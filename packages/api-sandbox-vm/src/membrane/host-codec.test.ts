import { describe, expect, it } from "vitest";
import { decodeGuestValue, encodeHostValue, SANDBOX_RAISED } from "./host-codec.js";

describe("host codec (the kernel's, worded for the plugin host)", () => {
  it("round-trips structured values, keeping cycles, shared references and holes", () => {
    const shared = { s: 1 };
    const value: Record<string, unknown> = {
      list: Object.assign([shared, shared, undefined, -0, Number.NaN, Number.NEGATIVE_INFINITY, 12n], {
        8: 3,
      }),
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
    expect(7 in list).toBe(false);
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.hasOwn(back, "__proto__")).toBe(true);
  });

  it("never sends a host stack to the guest", () => {
    const error = new TypeError("x");
    const text = encodeHostValue(error);
    expect(text).not.toContain("host-codec");
    expect((decodeGuestValue(text) as Error).stack).toBe("");
  });

  it("marks an error the sandbox raised, keeping its code and guest stack", () => {
    const guest = new Error("m (C)");
    guest.name = "SuaveplanError";
    Object.defineProperty(guest, "code", { value: "C", enumerable: true });
    guest.stack = "SuaveplanError: m (C)\n    at f (sandbox:/plugin/p.mjs:1:1)";
    const text = JSON.stringify(["E", guest.name, guest.message, guest.stack, [["code", "C"]]]);
    const raised = decodeGuestValue(text, true) as Error & { code: string; [SANDBOX_RAISED]?: true };
    expect([raised.name, raised.code, raised[SANDBOX_RAISED], raised.stack]).toEqual([
      "SuaveplanError",
      "C",
      true,
      "SuaveplanError: m (C)\n    at f (sandbox:/plugin/p.mjs:1:1)",
    ]);
    expect((decodeGuestValue(text) as { [SANDBOX_RAISED]?: true })[SANDBOX_RAISED]).toBeUndefined();
  });

  it("refuses functions, symbols and promises with SAND_VM_DATA_CLONE_FAILED naming where they are", () => {
    expect(() => encodeHostValue([{ bad: () => 1 }], "args")).toThrow(
      expect.objectContaining({
        code: "SAND_VM_DATA_CLONE_FAILED",
        details: { path: "args[0].bad", what: "function" },
      }),
    );
    for (const bad of [Symbol("s"), Promise.resolve(), new WeakMap()]) {
      expect(() => encodeHostValue({ bad })).toThrow(
        expect.objectContaining({ code: "SAND_VM_DATA_CLONE_FAILED" }),
      );
    }
  });

  it("refuses malformed or too deep guest text with SAND_VM_DATA_CLONE_FAILED", () => {
    expect(() => decodeGuestValue('["?"]')).toThrow(
      expect.objectContaining({
        code: "SAND_VM_DATA_CLONE_FAILED",
        message: expect.stringContaining("could not be copied to the host (unknown tag or wrong arity)"),
      }),
    );
    const deep = `${'["a",['.repeat(1500)}1${"]]".repeat(1500)}`;
    expect(() => decodeGuestValue(deep)).toThrow(
      expect.objectContaining({
        message: expect.stringContaining("(nested deeper than 1000 levels)"),
        details: { reason: "nested deeper than 1000 levels" },
      }),
    );
  });
});
