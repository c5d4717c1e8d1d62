import { readdirSync, readFileSync } from "node:fs";
import { Script } from "node:vm";
import { expect, it } from "vitest";
import { KERNEL_SOURCES } from "../dist/sources.js";
import { PLUGIN_KERNEL_SOURCE } from "../dist/sources-plugin.js";
import { KERNEL_PROFILES } from "./profiles/index.js";

/** Each profile's bundle as the build wrote it: the engines' (`./sources`) and the plugin host's (`./sources/plugin`). */
const BUNDLES: readonly (readonly [name: string, text: string])[] = [
  ...Object.keys(KERNEL_PROFILES).map(
    (name) => [name, KERNEL_SOURCES[name as keyof typeof KERNEL_SOURCES]] as const,
  ),
  ["plugin", PLUGIN_KERNEL_SOURCE],
];

// The bundles the build wrote (run `pnpm build` first), as a realm gets them.
it("each profile's bundle is printable ASCII, declares no top-level function, and returns a kernel", () => {
  const checked = BUNDLES.map(([name, text]) => {
    // A realm evaluates it as the body of a function; `install` and `enter` are what it returns.
    const kernel = new Script(`(function () {\n${text}})()`).runInNewContext() as Record<string, unknown>;
    return {
      name,
      // One byte per character in V8, for the text and for every code cache made of it.
      printableAscii: /^[\t\n\r -~]*$/.test(text),
      // Each top-level function is a parenthesised expression (the build's `eagerly`): V8 compiles
      // it with the script, so a code cache made at compile time holds it. A declaration left at
      // the start of a line would be compiled on its first call, in every new isolate.
      declarations: text.match(/^(async )?function\b.*$/gm) ?? [],
      expressions: (text.match(/^var \w+ = \(function \w+\(/gm) ?? []).length > 0,
      kernel: Object.keys(kernel).sort(),
    };
  });
  expect(checked).toEqual(
    BUNDLES.map(([name]) => ({
      name,
      printableAscii: true,
      declarations: [],
      expressions: true,
      kernel: ["enter", "install"],
    })),
  );
});

it("the engines' module does not carry the plugin host's parts", () => {
  expect(Object.values(KERNEL_SOURCES).map((text) => text.includes("installGuestLockdown"))).toEqual(
    Object.keys(KERNEL_SOURCES).map(() => false),
  );
  expect(PLUGIN_KERNEL_SOURCE).toContain("function installGuestLockdown(kit)");
});

// In a fresh realm an ordinary object literal costs a hidden-class transition per property: the
// intrinsics of inspect and the codec, handed over that way at install, made the kernel's install
// 340 → 557 µs per node:vm context (README, "Why bundled at build time").
it("each factory of inspect/ and codec/ hands its results over in a null-prototype literal", () => {
  const folders = ["parts/inspect", "codec"].map((folder) => new URL(`./${folder}/`, import.meta.url));
  const factories = folders.flatMap((folder) =>
    readdirSync(folder)
      .filter((file) => !file.endsWith(".test.ts") && file !== "shared.ts" && !file.startsWith("install-"))
      .map((file) => {
        const text = readFileSync(new URL(file, folder), "utf8");
        const returns = text.match(/^ {2}return (?:\(\) => \()?\{\n?\s*(\S+)/gm) ?? [];
        return {
          file,
          returns: returns.map((line) => (line.endsWith("__proto__:") ? "null-prototype" : line)),
        };
      }),
  );
  expect(factories.length).toBe(13);
  expect(factories.filter(({ returns }) => returns.length !== 1 || returns[0] !== "null-prototype")).toEqual(
    [],
  );
});
