import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { checkMcpSettings, readMcpConfig, resolveMcpConfig, SandboxMcpConfigSchema } from "./mcp-config.js";

const scratch = mkdtempSync(join(tmpdir(), "suaveplan-mcp-config-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function thrown(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error("expected a throw");
}

const PAGE = "(SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md";

describe("resolveMcpConfig", () => {
  it("an empty config gets the defaults: isolate, read-only, network denied, every tool", () => {
    expect(resolveMcpConfig({}, { baseDir: "/etc/cfg", cwd: "/srv/project" })).toEqual({
      engine: "isolate",
      allowUnsafeEngines: false,
      limits: {
        timeoutMs: 5000,
        maxTimeoutMs: 5000,
        memoryBytes: 64 * 1024 * 1024,
        maxOutputBytes: 65536,
        maxToolCalls: undefined,
      },
      maxConcurrentCalls: 4,
      tools: undefined,
      shell: {
        mode: "read-only",
        workspace: "/srv/project",
        writableRoots: [],
        network: "deny",
        timeoutMs: 30000,
        maxTimeoutMs: 30000,
        maxOutputBytes: 65536,
        env: { pass: ["PATH", "HOME", "LANG", "TERM", "TMPDIR"], set: {} },
      },
      enabledTools: ["run_javascript", "run_command", "describe_sandbox"],
    });
  });

  it("relative paths resolve against the config's directory", () => {
    const settings = resolveMcpConfig(
      {
        tools: "./tools.mjs",
        shell: { workspace: "ws", writableRoots: ["../cache", "/abs"], network: { allow: ["example.com"] } },
        enabledTools: ["run_command", "run_command"],
      },
      { baseDir: "/etc/cfg", cwd: "/srv" },
    );
    expect(settings.tools).toBe("/etc/cfg/tools.mjs");
    expect(settings.shell).toMatchObject({
      workspace: "/etc/cfg/ws",
      writableRoots: ["/etc/cache", "/abs"],
      network: { allow: ["example.com"] },
    });
    expect(settings.enabledTools).toEqual(["run_command"]);
  });

  it("bad values are SANDBOX_INVALID_CONFIG naming the field and the reason", () => {
    const cases: Array<[unknown, string]> = [
      [{ engine: "docker" }, "engine: Invalid option"],
      [
        { engine: "worker" },
        `engine: "worker" runs the code in the server's process, where one fatal V8 error (out of memory) ends the server and every session; use "isolate" or "spawn", or set "allowUnsafeEngines": true to accept that`,
      ],
      [{ shell: { env: { pass: ["A=B"] } } }, "shell.env.pass.0: must be an environment variable name"],
      [{ shell: { mode: "danger-full-access" } }, "shell.mode: Invalid option"],
      [{ shell: { colour: "red" } }, "shell.colour: Unrecognized key"],
      [{ limits: { timeoutMs: -1 } }, "limits.timeoutMs: Too small"],
      [
        { limits: { timeoutMs: 2000, maxTimeoutMs: 1000 } },
        "limits.maxTimeoutMs: must be at least limits.timeoutMs",
      ],
      [{ enabledTools: ["rm_rf"] }, "enabledTools.0: Invalid option"],
      [[], "(top level): Invalid input: expected object, received array"],
    ];
    for (const [input, start] of cases) {
      const error = thrown(() => resolveMcpConfig(input, { baseDir: "/", cwd: "/" }));
      expect(error.code).toBe("SANDBOX_INVALID_CONFIG");
      expect(error.message.startsWith(`sandbox-mcp config: ${start}`)).toBe(true);
      expect(error.message.endsWith(PAGE)).toBe(true);
    }
  });
});

describe("durations and sizes", () => {
  const resolve = (config: unknown) => resolveMcpConfig(config, { baseDir: "/", cwd: "/" });

  it("a string carries its unit; a number is in the unit the field's name says", () => {
    const written = resolve({
      limits: { timeoutMs: "2s", maxTimeoutMs: "1m", memoryMiB: "1GiB", maxOutputBytes: "64KiB" },
      shell: { timeoutMs: "1.5s", maxTimeoutMs: "2m", maxOutputBytes: "1MB" },
    });
    expect({ limits: written.limits, shell: written.shell }).toMatchObject({
      limits: {
        timeoutMs: 2000,
        maxTimeoutMs: 60_000,
        memoryBytes: 1024 * 1024 * 1024,
        maxOutputBytes: 65_536,
      },
      shell: { timeoutMs: 1500, maxTimeoutMs: 120_000, maxOutputBytes: 1_000_000 },
    });
    expect(resolve({ limits: { timeoutMs: 2000, memoryMiB: 256, maxOutputBytes: 4096 } }).limits).toEqual({
      timeoutMs: 2000,
      maxTimeoutMs: 2000,
      memoryBytes: 256 * 1024 * 1024,
      maxOutputBytes: 4096,
      maxToolCalls: undefined,
    });
  });

  it("bad strings and sizes are SANDBOX_INVALID_CONFIG naming the field and the fix", () => {
    const cases: unknown[] = [
      { limits: { timeoutMs: "30" } },
      { limits: { memoryMiB: "64mb" } },
      { limits: { memoryMiB: 1.5 } },
      { limits: { memoryMiB: "32GiB" } },
      { shell: { timeoutMs: "-1s" } },
      { limits: { timeoutMs: "2s", maxTimeoutMs: "1s" } },
    ];
    expect(cases.map((config) => thrown(() => resolve(config)).message.replace(` ${PAGE}`, ""))).toEqual([
      'sandbox-mcp config: limits.timeoutMs: needs a unit (ms, s, m, h): a string must say which, e.g. "30ms"; a plain number is read as milliseconds (got "30")',
      'sandbox-mcp config: limits.memoryMiB: has an unknown unit "mb" (did you mean MiB (1048576 bytes) or MB (1000000 bytes)?); units are B, KiB, MiB, GiB, kB, MB, GB (got "64mb")',
      'sandbox-mcp config: limits.memoryMiB: must be a whole number of MiB; for other sizes write a string such as "1536KiB" (got 1.5)',
      'sandbox-mcp config: limits.memoryMiB: must be at most 16 GiB (got "32GiB")',
      'sandbox-mcp config: shell.timeoutMs: must not be negative; write a number and a unit (ms, s, m, h), e.g. "250ms", "30s", "2m" (got "-1s")',
      "sandbox-mcp config: limits.maxTimeoutMs: must be at least limits.timeoutMs",
    ]);
  });
});

describe("engines and the commands' environment", () => {
  it("vm and worker need allowUnsafeEngines; isolate and spawn do not", () => {
    const resolve = (config: unknown) => resolveMcpConfig(config, { baseDir: "/", cwd: "/" });
    expect(resolve({ engine: "vm", allowUnsafeEngines: true })).toMatchObject({
      engine: "vm",
      allowUnsafeEngines: true,
    });
    expect(resolve({ engine: "spawn" })).toMatchObject({ engine: "spawn", allowUnsafeEngines: false });
    // Settings built by hand are checked when a server is made from them.
    const error = thrown(() => checkMcpSettings({ ...resolve({}), engine: "vm" }));
    expect(error.message).toMatch(/^sandbox-mcp config: engine: "vm" runs the code in the server's process/);
  });

  it("shell.env adds names to the allow-list and sets values", () => {
    expect(
      resolveMcpConfig(
        { shell: { env: { pass: ["FOO", "PATH"], set: { BAR: "1" } } } },
        { baseDir: "/", cwd: "/" },
      ).shell.env,
    ).toEqual({ pass: ["PATH", "HOME", "LANG", "TERM", "TMPDIR", "FOO"], set: { BAR: "1" } });
  });

  it("checkMcpSettings: a shell.workspace that is not a directory names the field and the path", () => {
    const missing = join(scratch, "missing");
    const settings = resolveMcpConfig({ shell: { workspace: missing } }, { baseDir: "/", cwd: "/" });
    expect(thrown(() => checkMcpSettings(settings)).message).toBe(
      `sandbox-mcp config: shell.workspace: ${missing} does not exist; create it or name an existing directory (commands run there) ${PAGE}`,
    );
    // Without run_command nothing runs there, so nothing is checked.
    expect(() => checkMcpSettings({ ...settings, enabledTools: ["run_javascript"] })).not.toThrow();
  });
});

describe("readMcpConfig", () => {
  it("names the file, and the field inside it", () => {
    const file = join(scratch, "bad.json");
    writeFileSync(file, JSON.stringify({ shell: { network: "sometimes" } }));
    expect(thrown(() => readMcpConfig("bad.json", scratch)).message).toMatch(
      /^sandbox-mcp config: bad\.json: shell\.network: Invalid input/,
    );
    writeFileSync(file, "{ nope");
    expect(thrown(() => readMcpConfig(file, "/")).message).toMatch(
      /^sandbox-mcp config: .*bad\.json: not JSON/,
    );
    expect(thrown(() => readMcpConfig("missing.json", scratch)).message).toBe(
      `sandbox-mcp config: missing.json: cannot read it (ENOENT) ${PAGE}`,
    );
  });

  it("reads a good file, paths relative to it", () => {
    writeFileSync(join(scratch, "good.json"), JSON.stringify({ engine: "spawn", shell: { workspace: "." } }));
    const settings = readMcpConfig("good.json", scratch);
    expect(settings.engine).toBe("spawn");
    expect(settings.shell.workspace).toBe(scratch);
  });
});

describe("SandboxMcpConfigSchema", () => {
  it("its JSON Schema (what an editor can validate the file with) stays as documented", () => {
    expect(z.toJSONSchema(SandboxMcpConfigSchema, { io: "input" })).toMatchInlineSnapshot(`
      {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "additionalProperties": false,
        "properties": {
          "allowUnsafeEngines": {
            "type": "boolean",
          },
          "enabledTools": {
            "items": {
              "enum": [
                "run_javascript",
                "run_command",
                "describe_sandbox",
              ],
              "type": "string",
            },
            "minItems": 1,
            "type": "array",
          },
          "engine": {
            "enum": [
              "vm",
              "worker",
              "spawn",
              "isolate",
              "quickjs",
            ],
            "type": "string",
          },
          "limits": {
            "additionalProperties": false,
            "properties": {
              "maxOutputBytes": {
                "anyOf": [
                  {
                    "exclusiveMinimum": 0,
                    "maximum": 9007199254740991,
                    "type": "number",
                  },
                  {
                    "type": "string",
                  },
                ],
                "description": "bytes, or a string with its unit: "512KiB", "64MiB", "1GiB" (powers of 1024) or "500kB", "64MB", "1GB" (powers of 1000)",
              },
              "maxTimeoutMs": {
                "anyOf": [
                  {
                    "exclusiveMinimum": 0,
                    "maximum": 2147483647,
                    "type": "number",
                  },
                  {
                    "type": "string",
                  },
                ],
                "description": "milliseconds, or a string with its unit: "250ms", "1.5s", "2m", "1h"",
              },
              "maxToolCalls": {
                "exclusiveMinimum": 0,
                "maximum": 9007199254740991,
                "type": "integer",
              },
              "memoryMiB": {
                "anyOf": [
                  {
                    "exclusiveMinimum": 0,
                    "maximum": 16384,
                    "type": "number",
                  },
                  {
                    "type": "string",
                  },
                ],
                "description": "MiB as a number, or a string with its unit: "512MiB", "1GiB"",
              },
              "timeoutMs": {
                "anyOf": [
                  {
                    "exclusiveMinimum": 0,
                    "maximum": 2147483647,
                    "type": "number",
                  },
                  {
                    "type": "string",
                  },
                ],
                "description": "milliseconds, or a string with its unit: "250ms", "1.5s", "2m", "1h"",
              },
            },
            "type": "object",
          },
          "maxConcurrentCalls": {
            "exclusiveMinimum": 0,
            "maximum": 64,
            "type": "integer",
          },
          "shell": {
            "additionalProperties": false,
            "properties": {
              "env": {
                "additionalProperties": false,
                "properties": {
                  "pass": {
                    "items": {
                      "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
                      "type": "string",
                    },
                    "type": "array",
                  },
                  "set": {
                    "additionalProperties": {
                      "type": "string",
                    },
                    "propertyNames": {
                      "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
                      "type": "string",
                    },
                    "type": "object",
                  },
                },
                "type": "object",
              },
              "maxOutputBytes": {
                "anyOf": [
                  {
                    "exclusiveMinimum": 0,
                    "maximum": 9007199254740991,
                    "type": "number",
                  },
                  {
                    "type": "string",
                  },
                ],
                "description": "bytes, or a string with its unit: "512KiB", "64MiB", "1GiB" (powers of 1024) or "500kB", "64MB", "1GB" (powers of 1000)",
              },
              "maxTimeoutMs": {
                "anyOf": [
                  {
                    "exclusiveMinimum": 0,
                    "maximum": 2147483647,
                    "type": "number",
                  },
                  {
                    "type": "string",
                  },
                ],
                "description": "milliseconds, or a string with its unit: "250ms", "1.5s", "2m", "1h"",
              },
              "mode": {
                "enum": [
                  "read-only",
                  "workspace-write",
                ],
                "type": "string",
              },
              "network": {
                "anyOf": [
                  {
                    "enum": [
                      "allow",
                      "deny",
                    ],
                    "type": "string",
                  },
                  {
                    "additionalProperties": false,
                    "properties": {
                      "allow": {
                        "items": {
                          "minLength": 1,
                          "type": "string",
                        },
                        "minItems": 1,
                        "type": "array",
                      },
                    },
                    "required": [
                      "allow",
                    ],
                    "type": "object",
                  },
                ],
              },
              "timeoutMs": {
                "anyOf": [
                  {
                    "exclusiveMinimum": 0,
                    "maximum": 2147483647,
                    "type": "number",
                  },
                  {
                    "type": "string",
                  },
                ],
                "description": "milliseconds, or a string with its unit: "250ms", "1.5s", "2m", "1h"",
              },
              "workspace": {
                "minLength": 1,
                "type": "string",
              },
              "writableRoots": {
                "items": {
                  "minLength": 1,
                  "type": "string",
                },
                "type": "array",
              },
            },
            "type": "object",
          },
          "tools": {
            "minLength": 1,
            "type": "string",
          },
        },
        "type": "object",
      }
    `);
  });
});
