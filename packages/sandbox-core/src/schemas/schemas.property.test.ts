import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isSandboxError } from "../error-codes/index.js";
import { parseEngineLimits, parseSandboxConfig, parseSandboxModule, parseSandboxOptions } from "./index.js";

// Property tests: every parser at the edge answers any input with a value or a coded error that
// names a field — never a raw exception (hostile toString/valueOf, symbols, BigInts included).

const anything = fc.anything({
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withNullPrototype: true,
  withObjectString: true,
  withSet: true,
  withSparseArray: true,
  withTypedArray: true,
});
/** Objects with the real field names and values of any type (so the field checks themselves run). */
const nearConfig = fc.dictionary(
  fc.constantFrom(
    "engine",
    "timeout",
    "memoryLimit",
    "maxOutputSize",
    "maxCodeLength",
    "allowedModules",
    "maxExecutionsPerWindow",
    "rateLimitWindow",
    "enableAudit",
    "language",
    "pool",
    "engineOptions",
    "typecheck",
    "signal",
    "onLog",
    "name",
    "source",
    "exports",
    "hostCalls",
    "unknownField",
  ),
  fc.oneof(
    anything,
    fc.constantFrom(
      { toString: 0 },
      {
        valueOf: () => {
          throw new Error("hostile");
        },
      },
      Symbol("s"),
      10n ** 30n,
    ),
  ),
  { maxKeys: 5 },
);

const PARSERS = [
  ["parseSandboxConfig", parseSandboxConfig, "SANDBOX_INVALID_CONFIG"],
  ["parseSandboxOptions", parseSandboxOptions, "SANDBOX_INVALID_OPTIONS"],
  ["parseSandboxModule", parseSandboxModule, "SANDBOX_INVALID_MODULE"],
  ["parseEngineLimits", parseEngineLimits, "SANDBOX_INVALID_CONFIG"],
] as const;

describe("config, options and module schemas (properties)", () => {
  it.each(PARSERS)("%s: a value or its coded error, never a raw exception", (_name, parse, code) => {
    fc.assert(
      fc.property(fc.oneof(anything, nearConfig), (input) => {
        try {
          parse(input);
        } catch (error) {
          expect({
            coded: isSandboxError(error),
            code: isSandboxError(error) ? error.code : String(error),
          }).toEqual({
            coded: true,
            code,
          });
        }
      }),
      { numRuns: 300 },
    );
  });
});
