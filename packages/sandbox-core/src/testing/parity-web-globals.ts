import { SANDBOX_CODES } from "../error-codes/sandbox-codes.js";
import type { SandboxResult } from "../types/sandbox-types.js";
import type { ParityRow } from "./parity-table.js";

const ok = (result: unknown, logs: SandboxResult["logs"] = []) => ({ success: true as const, result, logs });
const guestFailure = (text: string, guestError: NonNullable<SandboxResult["guestError"]>) => ({
  success: false as const,
  error: `${text} (${SANDBOX_CODES.GUEST_ERROR})`,
  errorCode: SANDBOX_CODES.GUEST_ERROR,
  logs: [],
  guestError,
});
const UUID_V4 = "/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/";

/**
 * Parity rows for the web-standard globals the kernel implements in the guest
 * realm (see {@link ParityRow}); spread into PARITY_ROWS. Every name starts
 * with "web globals:" so `vitest -t "web globals"` runs just these.
 */
export const PARITY_WEB_GLOBALS_ROWS: readonly ParityRow[] = [
  {
    name: "web globals: TextEncoder and TextDecoder round-trip UTF-8",
    code: 'const bytes = new TextEncoder().encode("héllo €"); [new TextDecoder().decode(bytes), bytes.length, new TextDecoder().decode(new Uint8Array([0x61, 0xff]))]',
    expected: ok(["héllo €", 10, "a\ufffd"]),
  },
  {
    name: "web globals: TextDecoder refuses other encodings with Node's RangeError",
    code: 'try { new TextDecoder("latin1") } catch (e) { [e.name, e.code, e.message] }',
    expected: ok(["RangeError", "ERR_ENCODING_NOT_SUPPORTED", 'The "latin1" encoding is not supported']),
  },
  {
    name: "web globals: btoa and atob, and atob's InvalidCharacterError",
    code: 'let bad; try { atob("a*") } catch (e) { bad = [e instanceof DOMException, e.name, e.code, e.message] } [btoa("hi"), atob(" aGk= "), bad]',
    expected: ok(["aGk=", "hi", [true, "InvalidCharacterError", 5, "Invalid character"]]),
  },
  {
    name: "web globals: structuredClone of a cyclic Map keeps the cycle",
    code: 'const m = new Map([["d", new Date(0)]]); m.set("self", m); const c = structuredClone(m); [c !== m, c.get("self") === c, c.get("d") instanceof Date, c.size]',
    expected: ok([true, true, true, 2]),
  },
  {
    name: "web globals: structuredClone of a function is a DataCloneError with Node's text",
    code: "try { structuredClone({ f: () => 1 }) } catch (e) { [e instanceof DOMException, e instanceof Error, e.name, e.code, e.message] }",
    expected: ok([true, true, "DataCloneError", 25, "() => 1 could not be cloned."]),
  },
  {
    name: "web globals: crypto.randomUUID is a v4 UUID and getRandomValues fills integer arrays only",
    code: `const u = crypto.randomUUID(); const a = crypto.getRandomValues(new Uint32Array(8)); let quota; try { crypto.getRandomValues(new Uint8Array(65537)) } catch (e) { quota = [e.name, e.code, e.message] } [typeof u, ${UUID_V4}.test(u), a.some((x) => x !== 0), quota, typeof crypto.subtle]`,
    expected: ok([
      "string",
      true,
      true,
      ["QuotaExceededError", 22, "The requested length exceeds 65,536 bytes"],
      "undefined",
    ]),
  },
  {
    name: "web globals: an abort reason flows to listeners, onabort and throwIfAborted",
    code: 'const c = new AbortController(); const seen = []; c.signal.addEventListener("abort", (e) => seen.push(e.type, c.signal.reason)); c.signal.onabort = () => seen.push("onabort"); c.abort("why"); let thrown; try { c.signal.throwIfAborted() } catch (e) { thrown = e } [c.signal.aborted, seen, thrown, AbortSignal.any([c.signal]).reason]',
    expected: ok([true, ["abort", "why", "onabort"], "why", "why"]),
  },
  {
    name: "web globals: abort() without a reason gives an AbortError DOMException",
    code: "const c = new AbortController(); c.abort(); const r = c.signal.reason; [r instanceof DOMException, r instanceof Error, r.name, r.message, r.code, String(r)]",
    expected: ok([
      true,
      true,
      "AbortError",
      "This operation was aborted",
      20,
      "AbortError: This operation was aborted",
    ]),
  },
  {
    name: "web globals: AbortSignal.timeout(5) rejects a pending promise with a TimeoutError DOMException",
    code: 'await new Promise((resolve, reject) => { const s = AbortSignal.timeout(5); s.addEventListener("abort", () => reject(s.reason)); })',
    expected: guestFailure("TimeoutError: The operation was aborted due to timeout", {
      name: "TimeoutError",
      message: "The operation was aborted due to timeout",
      stack: "TimeoutError: The operation was aborted due to timeout",
    }),
  },
  {
    name: "web globals: EventTarget dispatches to its listeners once each, in order",
    code: 'const t = new EventTarget(); const seen = []; t.addEventListener("x", (e) => seen.push(1, e.target === t)); t.addEventListener("x", () => seen.push(2), { once: true }); const e = new Event("x", { cancelable: true }); t.addEventListener("x", (ev) => ev.preventDefault()); const r1 = t.dispatchEvent(e); t.dispatchEvent(new Event("x")); [r1, e.defaultPrevented, seen]',
    expected: ok([false, true, [1, true, 2, 1, true]]),
  },
  {
    name: "web globals: performance.now counts from timeOrigin and does not go backwards",
    code: "const a = performance.now(); const b = performance.now(); [typeof performance.timeOrigin, a >= 0, b >= a, Math.abs(performance.timeOrigin + b - Date.now()) < 1000]",
    expected: ok(["number", true, true, true]),
  },
  {
    name: "web globals: class tags and what console.log prints for them",
    code: "console.log(new TextEncoder(), new AbortController(), crypto, performance); [String(new AbortController().signal), Object.prototype.toString.call(new TextEncoder()), typeof DOMException, AbortSignal.name, Event.length]",
    expected: ok(
      ["[object AbortSignal]", "[object TextEncoder]", "function", "AbortSignal", 1],
      [{ level: "log", message: "TextEncoder {} AbortController {} Crypto {} Performance {}" }],
    ),
  },
  {
    name: "web globals: tampered built-ins do not reach TextDecoder, structuredClone or crypto",
    code: 'Array.prototype[Symbol.iterator] = function* () {}; Map.prototype.set = () => { throw new Error("poisoned") }; String.fromCharCode = () => "poisoned"; const c = structuredClone({ m: new Map([]), s: "x" }); [new TextDecoder().decode(new TextEncoder().encode("ok")), c.m instanceof Map, crypto.randomUUID().length]',
    expected: ok(["ok", true, 36]),
  },
];
