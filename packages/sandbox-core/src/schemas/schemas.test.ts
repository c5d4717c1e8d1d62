import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isSandboxError, type SandboxError } from "../error-codes/index.js";
import {
  parseSandboxConfig,
  parseSandboxModule,
  parseSandboxOptions,
  SANDBOX_DEFAULTS,
  SandboxConfigPartialSchema,
} from "./index.js";

function thrown(run: () => unknown): SandboxError {
  try {
    run();
  } catch (error) {
    if (isSandboxError(error)) return error;
    throw error;
  }
  throw new Error("expected a SandboxError");
}

/** Set SUAVEPLAN_UPDATE_SCHEMAS=1 to rewrite the committed JSON Schema after an intended change. */
const UPDATE = process.env.SUAVEPLAN_UPDATE_SCHEMAS === "1";
const SCHEMA_FILE = fileURLToPath(new URL("./sandbox-config.schema.json", import.meta.url));

describe("schemas", () => {
  it("rejects negative timeout", () => {
    const error = thrown(() => parseSandboxConfig({ timeout: -1 }));
    expect(error.code).toBe("SANDBOX_INVALID_CONFIG");
    expect(error.message).toBe(
      "Invalid sandbox config: config.timeout: Too small: expected number to be >0 (got -1) (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md",
    );
    expect(error.details).toEqual({
      issues: [{ path: ["timeout"], message: "Too small: expected number to be >0" }],
    });
  });

  it("rejects unknown fields, naming them", () => {
    expect(thrown(() => parseSandboxConfig({ timeot: 5 })).message).toBe(
      'Invalid sandbox config: config: Unrecognized key: "timeot" (got {"timeot":5}) (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md',
    );
    expect(thrown(() => parseSandboxConfig({ pool: { minSize: 1, size: 2 } })).message).toBe(
      'Invalid sandbox config: config.pool: Unrecognized key: "size" (got {"minSize":1,"size":2}) (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md',
    );
  });

  it("rejects a malformed engine name and an unknown built-in module (which engines exist is the facade's registry's call)", () => {
    expect(thrown(() => parseSandboxConfig({ engine: "Docker Engine" })).message).toBe(
      'Invalid sandbox config: config.engine: must be an engine name: lowercase letters, digits and dashes (vm, worker, spawn, isolate, quickjs, or one you registered) (got "Docker Engine") (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md',
    );
    expect(parseSandboxConfig({ engine: "quickjs" }).engine).toBe("quickjs");
    expect(thrown(() => parseSandboxConfig({ allowedModules: ["Math", "fs"] })).message).toBe(
      'Invalid sandbox config: config.allowedModules.1: Invalid option: expected one of "Math"|"JSON"|"Date" (got "fs") (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md',
    );
    expect(thrown(() => parseSandboxConfig({ pool: { minSize: 5, maxSize: 2 } })).message).toBe(
      "Invalid sandbox config: config.pool.minSize: minSize must not exceed maxSize (got 5) (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md",
    );
  });

  it("applies defaults and keeps what the user wrote", () => {
    expect(parseSandboxConfig()).toEqual({
      ...SANDBOX_DEFAULTS,
      allowedModules: ["Math", "JSON", "Date"],
      maxExecutionsPerWindow: undefined,
      pool: undefined,
      engineOptions: {},
    });
    expect(parseSandboxConfig({ engine: "isolate", timeout: 250, pool: { maxSize: 2 } })).toMatchObject({
      engine: "isolate",
      timeout: 250,
      pool: {
        minSize: 0,
        maxSize: 2,
        maxExecutionsPerEngine: 100,
        idleTimeoutMs: 30_000,
        maxQueue: 0,
        acquireTimeoutMs: 5_000,
      },
    });
  });

  it("raises INVALID_OPTIONS for bad per-execution options", () => {
    const error = thrown(() => parseSandboxOptions({ timeout: "5 seconds" }));
    expect(error.code).toBe("SANDBOX_INVALID_OPTIONS");
    expect(error.message).toBe(
      'Invalid execution options: options.timeout: has an unknown unit "seconds" (did you mean s?); units are ms, s, m, h (got "5 seconds") (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md',
    );
    expect(thrown(() => parseSandboxOptions({ onLog: 3 })).message).toBe(
      "Invalid execution options: options.onLog: must be a function (got 3) (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md",
    );
    const onLog = () => {};
    expect(parseSandboxOptions({ timeout: 10, onLog })).toEqual({ timeout: 10, onLog });
    expect(parseSandboxOptions(undefined)).toEqual({});
  });

  it("takes a language per execution, per sandbox and per module, naming the field when it is not one", () => {
    expect(parseSandboxOptions({ language: "typescript" })).toEqual({ language: "typescript" });
    expect(parseSandboxConfig({ language: "typescript" }).language).toBe("typescript");
    expect(parseSandboxConfig().language).toBe("javascript");
    expect(thrown(() => parseSandboxOptions({ language: "python" })).message).toBe(
      'Invalid execution options: options.language: Invalid option: expected one of "javascript"|"typescript" (got "python") (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md',
    );
    expect(thrown(() => parseSandboxConfig({ language: "TS" })).message).toBe(
      'Invalid sandbox config: config.language: Invalid option: expected one of "javascript"|"typescript" (got "TS") (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md',
    );
    expect(thrown(() => parseSandboxModule({ name: "m", source: "1", language: 1 })).message).toBe(
      'Invalid module: module.language: Invalid option: expected one of "javascript"|"typescript" (got 1) (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md',
    );
  });

  it("raises INVALID_MODULE for malformed modules", () => {
    const error = thrown(() => parseSandboxModule({ name: "1bad", exports: {} }));
    expect(error.code).toBe("SANDBOX_INVALID_MODULE");
    expect(error.message).toBe(
      'Invalid module: module.name: must be a JavaScript identifier (got "1bad") (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md',
    );
    expect(thrown(() => parseSandboxModule({ name: "ok" })).message).toBe(
      "Invalid module: module.exports: needs `exports` (plain data) or `source` (guest JavaScript) (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md",
    );
    expect(parseSandboxModule({ name: "ok", source: "module.exports = 1" })).toEqual({
      name: "ok",
      source: "module.exports = 1",
    });
  });

  it("matches the committed JSON Schema of SandboxConfigPartialSchema", () => {
    const generated = `${JSON.stringify(z.toJSONSchema(SandboxConfigPartialSchema, { io: "input" }), null, 2)}\n`;
    if (UPDATE) writeFileSync(SCHEMA_FILE, generated);
    expect(
      existsSync(SCHEMA_FILE),
      "src/schemas/sandbox-config.schema.json is missing; run with SUAVEPLAN_UPDATE_SCHEMAS=1",
    ).toBe(true);
    expect(
      readFileSync(SCHEMA_FILE, "utf8"),
      "the config schema drifted from sandbox-config.schema.json; review, then run with SUAVEPLAN_UPDATE_SCHEMAS=1",
    ).toBe(generated);
  });
});
