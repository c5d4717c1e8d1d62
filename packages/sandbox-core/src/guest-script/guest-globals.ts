/**
 * The web-standard globals every engine gives guest code, beside the
 * ECMAScript built-ins. Each is implemented inside the guest realm by the
 * kernel (`@suaveplan/sandbox-guest`), with no host object behind it, so it
 * behaves the same on every engine (the parity table pins it). The set is the
 * part of the WinterTC minimum common API that makes sense without I/O.
 *
 * One list, used by the README, `toolDeclarations()`, the MCP tool
 * description and the AI SDK code tool, so what the model is told matches
 * what the guest has.
 */
export interface GuestGlobal {
  /** The global's name, e.g. `URL`. */
  readonly name: string;
  /** One line: what it is and any difference from the web platform. */
  readonly summary: string;
}

/** What the guest has. Order: as listed to a model. */
export const GUEST_GLOBALS: readonly GuestGlobal[] = Object.freeze(
  [
    { name: "console", summary: "log, info, warn, error, debug; captured as the run's logs" },
    { name: "setTimeout", summary: "with clearTimeout, setInterval, clearInterval; limited in number" },
    { name: "queueMicrotask", summary: "as on the web" },
    { name: "URL", summary: "WHATWG URL parsing and serialisation" },
    { name: "URLSearchParams", summary: "as on the web" },
    { name: "TextEncoder", summary: "UTF-8 only, as on the web" },
    { name: "TextDecoder", summary: "UTF-8 only (fatal, ignoreBOM and stream options)" },
    { name: "atob", summary: "with btoa; base64 of Latin-1 strings" },
    {
      name: "structuredClone",
      summary:
        "plain data, Date, RegExp, Map, Set, ArrayBuffer, typed arrays, errors; cycles kept; no transfer option",
    },
    { name: "crypto", summary: "getRandomValues and randomUUID only (no crypto.subtle)" },
    {
      name: "AbortController",
      summary: "with AbortSignal (abort, any, timeout; a timeout is a guest timer the run waits for)",
    },
    { name: "EventTarget", summary: "with Event; addEventListener, removeEventListener, dispatchEvent" },
    { name: "DOMException", summary: "as on the web" },
    {
      name: "performance",
      summary: "performance.now() and timeOrigin only; millisecond steps from Date.now()",
    },
  ].map((entry) => Object.freeze(entry)),
);

/** What a model might expect and the guest deliberately lacks, with why. */
export const ABSENT_GUEST_GLOBALS: readonly GuestGlobal[] = Object.freeze(
  [
    { name: "fetch", summary: "no network from guest code; call a host tool instead" },
    { name: "require", summary: "no Node modules; registered modules only, by name" },
    { name: "process", summary: "no host process, environment or file system" },
    { name: "crypto.subtle", summary: "no Web Crypto keys or digests" },
    { name: "Blob", summary: "no Blob, File, streams or FormData" },
  ].map((entry) => Object.freeze(entry)),
);

/** The globals as one line each (`- URL: WHATWG URL …`), for a tool description. */
export function describeGuestGlobals(): string {
  const have = GUEST_GLOBALS.map((entry) => `- ${entry.name}: ${entry.summary}`).join("\n");
  const lack = ABSENT_GUEST_GLOBALS.map((entry) => `- ${entry.name}: ${entry.summary}`).join("\n");
  return `Globals beside the JavaScript built-ins:\n${have}\nNot available:\n${lack}`;
}
