import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { durationSchema, readSize, sizeSchema } from "@suaveplan/sandbox-core/schemas";
import { type BuiltinEngineName, ENGINE_NAMES } from "@suaveplan/sandbox-core/types";
import { z } from "zod";

/** The MCP tools this server can expose. */
export const MCP_TOOL_NAMES = ["run_javascript", "run_command", "describe_sandbox"] as const;

/** One of {@link MCP_TOOL_NAMES}. */
export type McpToolName = (typeof MCP_TOOL_NAMES)[number];

const positiveInt = z.number().int().positive();
const MIB = 1024 * 1024;
/** A duration: a number is ms (as the field's name says), a string carries its unit ("30s"). */
const milliseconds = durationSchema(2_147_483_647);
/** A size: a number is bytes (as the field's name says), a string carries its unit ("64KiB"). */
const bytes = sizeSchema();
/** `memoryMiB`: a number is MiB (as its name says), a string carries its unit ("512MiB", "1GiB"); resolves to bytes, at most 16 GiB. */
const memory = z
  .union([z.number().positive().max(16_384), z.string()])
  .transform((value, ctx) => {
    if (typeof value === "number") {
      if (Number.isInteger(value)) return value * MIB;
      ctx.addIssue({
        code: "custom",
        message: 'must be a whole number of MiB; for other sizes write a string such as "1536KiB"',
      });
      return z.NEVER;
    }
    const reading = readSize(value);
    if (reading.ok) return reading.value;
    ctx.addIssue({ code: "custom", message: reading.reason });
    return z.NEVER;
  })
  .pipe(
    z
      .number()
      .int()
      .positive()
      .max(16_384 * MIB, "must be at most 16 GiB"),
  )
  .meta({ description: 'MiB as a number, or a string with its unit: "512MiB", "1GiB"' });
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name");
const path = z
  .string()
  .min(1)
  .refine((value) => !value.includes("\0"), "must not contain a NUL byte");

/**
 * The config file as written (JSON). Every key is optional; unknown keys are
 * refused. Relative paths are relative to the file's own directory.
 */
export const SandboxMcpConfigSchema = z
  .strictObject({
    /**
     * The engine `run_javascript` uses: one of the built-in engines. Default `"isolate"` (a V8
     * security boundary in a helper process); `"quickjs"` is a boundary too (WebAssembly, no JIT);
     * `"vm"` and `"worker"` also need `allowUnsafeEngines: true`.
     */
    engine: z.enum(ENGINE_NAMES as [BuiltinEngineName, ...BuiltinEngineName[]]).optional(),
    /**
     * Allow `engine: "vm"` or `"worker"`: guest code then runs in the server's own process, where one
     * fatal V8 error (out of memory) ends the server and every session. Default false.
     */
    allowUnsafeEngines: z.boolean().optional(),
    /** Limits of `run_javascript`. */
    limits: z
      .strictObject({
        /** Default wall-clock limit per execution: ms, or a string with its unit such as `"5s"` (5 000 ms). */
        timeoutMs: milliseconds.optional(),
        /** The largest `timeoutMs` a call may ask for: ms, or `"30s"` (default: `timeoutMs`). */
        maxTimeoutMs: milliseconds.optional(),
        /** Heap limit per execution: MiB, or a string with its unit such as `"512MiB"` (64 MiB). */
        memoryMiB: memory.optional(),
        /** Cap on captured console output and returned text: bytes, or `"64KiB"` (65 536 bytes). */
        maxOutputBytes: bytes.optional(),
        /** Tool calls one execution may make (the sandbox's default when absent). */
        maxToolCalls: positiveInt.optional(),
      })
      .optional(),
    /** Executions and commands served at once; later calls wait for a slot (4). */
    maxConcurrentCalls: positiveInt.max(64).optional(),
    /** An ES module whose default export is the host tools object (AI SDK `tool()` shape). */
    tools: path.optional(),
    /** Policy of `run_command`. */
    shell: z
      .strictObject({
        /** File-effect mode (`"read-only"` default, or `"workspace-write"`); never unconfined. */
        mode: z.enum(["read-only", "workspace-write"]).optional(),
        /** Workspace root: commands run there (default: the server's current directory). */
        workspace: path.optional(),
        /** Extra writable directories under `workspace-write`. */
        writableRoots: z.array(path).optional(),
        /** `"deny"` (default), `"allow"`, or `{ "allow": ["api.example.com", "*.example.org"] }`. */
        network: z
          .union([z.enum(["allow", "deny"]), z.strictObject({ allow: z.array(z.string().min(1)).min(1) })])
          .optional(),
        /** Default wall-clock limit per command: ms, or a string with its unit such as `"30s"` (30 000 ms). */
        timeoutMs: milliseconds.optional(),
        /** The largest `timeoutMs` a call may ask for: ms, or `"2m"` (default: `timeoutMs`). */
        maxTimeoutMs: milliseconds.optional(),
        /** Bytes kept per stream (stdout, stderr), then a truncation sentinel: bytes, or `"64KiB"` (65 536). */
        maxOutputBytes: bytes.optional(),
        /**
         * Commands' environment: only PATH, HOME, LANG, TERM and TMPDIR pass from the server's
         * environment, plus the names in `pass`; `set` gives values outright.
         */
        env: z
          .strictObject({
            /** Further names passed through from the server's environment (when set there). */
            pass: z.array(envName).optional(),
            /** Variables set to these values (they win over passed ones). */
            set: z.record(envName, z.string()).optional(),
          })
          .optional(),
      })
      .optional(),
    /** Which MCP tools to expose (default: all three). */
    enabledTools: z.array(z.enum(MCP_TOOL_NAMES)).min(1).optional(),
  })
  .superRefine((config, ctx) => {
    const engine = config.engine;
    if ((engine === "vm" || engine === "worker") && config.allowUnsafeEngines !== true) {
      ctx.addIssue({
        code: "custom",
        path: ["engine"],
        message: `"${engine}" runs the code in the server's process, where one fatal V8 error (out of memory) ends the server and every session; use "isolate" or "spawn", or set "allowUnsafeEngines": true to accept that`,
      });
    }
  });

/** What commands get from the server's environment without `shell.env.pass` naming it. */
export const SHELL_ENV_PASSED = ["PATH", "HOME", "LANG", "TERM", "TMPDIR"] as const;

/** The config as written. */
export type SandboxMcpConfig = z.input<typeof SandboxMcpConfigSchema>;

/** The config resolved: defaults applied, paths absolute. */
export interface SandboxMcpSettings {
  engine: BuiltinEngineName;
  /** Whether `vm` and `worker` were allowed (`allowUnsafeEngines`). */
  allowUnsafeEngines: boolean;
  limits: {
    timeoutMs: number;
    maxTimeoutMs: number;
    memoryBytes: number;
    maxOutputBytes: number;
    maxToolCalls: number | undefined;
  };
  maxConcurrentCalls: number;
  /** Absolute path of the tools module, when one is configured. */
  tools: string | undefined;
  shell: {
    mode: "read-only" | "workspace-write";
    /** Absolute (canonicalised when used). */
    workspace: string;
    writableRoots: string[];
    network: "allow" | "deny" | { allow: string[] };
    timeoutMs: number;
    maxTimeoutMs: number;
    maxOutputBytes: number;
    /** Commands' environment: names passed from the server's environment, and values set outright. */
    env: { pass: string[]; set: Record<string, string> };
  };
  enabledTools: McpToolName[];
}

/** Where relative paths of a config resolve. */
export interface ResolveConfigOptions {
  /** Directory relative paths in the config are resolved against (the config file's directory). */
  baseDir: string;
  /** The server's current directory: the default workspace. */
  cwd: string;
}

/**
 * Check a config (as parsed from JSON) and resolve it.
 * @throws SandboxError (`SANDBOX_INVALID_CONFIG`) naming the field and the reason.
 */
export function resolveMcpConfig(input: unknown, options: ResolveConfigOptions): SandboxMcpSettings {
  const parsed = SandboxMcpConfigSchema.safeParse(input ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const keys = issue !== undefined && "keys" in issue ? (issue.keys as string[]) : [];
    const field = [...(issue?.path ?? []), ...keys].join(".") || "(top level)";
    throw invalid(`${field}: ${issue?.message ?? "invalid"}${unitValue(input, issue?.path ?? [])}`);
  }
  const config = parsed.data;
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(options.baseDir, p));
  const timeoutMs = config.limits?.timeoutMs ?? 5_000;
  const maxTimeoutMs = config.limits?.maxTimeoutMs ?? timeoutMs;
  if (maxTimeoutMs < timeoutMs) throw invalid("limits.maxTimeoutMs: must be at least limits.timeoutMs");
  const shellTimeoutMs = config.shell?.timeoutMs ?? 30_000;
  const shellMaxTimeoutMs = config.shell?.maxTimeoutMs ?? shellTimeoutMs;
  if (shellMaxTimeoutMs < shellTimeoutMs)
    throw invalid("shell.maxTimeoutMs: must be at least shell.timeoutMs");
  const network = config.shell?.network ?? "deny";
  return {
    engine: config.engine ?? "isolate",
    allowUnsafeEngines: config.allowUnsafeEngines ?? false,
    limits: {
      timeoutMs,
      maxTimeoutMs,
      memoryBytes: config.limits?.memoryMiB ?? 64 * MIB,
      maxOutputBytes: config.limits?.maxOutputBytes ?? 65_536,
      maxToolCalls: config.limits?.maxToolCalls,
    },
    maxConcurrentCalls: config.maxConcurrentCalls ?? 4,
    tools: config.tools === undefined ? undefined : abs(config.tools),
    shell: {
      mode: config.shell?.mode ?? "read-only",
      workspace: config.shell?.workspace === undefined ? options.cwd : abs(config.shell.workspace),
      writableRoots: (config.shell?.writableRoots ?? []).map(abs),
      network: typeof network === "string" ? network : { allow: [...network.allow] },
      timeoutMs: shellTimeoutMs,
      maxTimeoutMs: shellMaxTimeoutMs,
      maxOutputBytes: config.shell?.maxOutputBytes ?? 65_536,
      env: {
        pass: [...new Set([...SHELL_ENV_PASSED, ...(config.shell?.env?.pass ?? [])])],
        set: { ...config.shell?.env?.set },
      },
    },
    enabledTools: [...new Set(config.enabledTools ?? MCP_TOOL_NAMES)],
  };
}

/** ` (got "30")` for a duration or size field (`…Ms`, `…Bytes`, `memoryMiB`), so its message shows what was written. */
function unitValue(input: unknown, path: readonly PropertyKey[]): string {
  const last = path.at(-1);
  if (typeof last !== "string" || !/(Ms|Bytes|MiB)$/.test(last)) return "";
  let value = input;
  for (const key of path) value = (value as Record<PropertyKey, unknown> | undefined)?.[key];
  return typeof value === "string" || typeof value === "number" ? ` (got ${JSON.stringify(value)})` : "";
}

/**
 * Read a JSON config file and resolve it (relative paths against the file's directory).
 * @throws SandboxError (`SANDBOX_INVALID_CONFIG`) naming the file, and the field when the JSON is wrong.
 */
export function readMcpConfig(file: string, cwd: string): SandboxMcpSettings {
  const full = resolve(cwd, file);
  let text: string;
  try {
    text = readFileSync(full, "utf8");
  } catch (error) {
    throw invalid(`${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? "error"})`, error);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalid(`${file}: not JSON (${(error as Error).message})`, error);
  }
  try {
    return resolveMcpConfig(json, { baseDir: dirname(full), cwd });
  } catch (error) {
    if (error instanceof SandboxError) {
      throw invalid(`${file}: ${String(error.details?.reason ?? error.message)}`, error);
    }
    throw error;
  }
}

/**
 * Check settings before serving: `vm` and `worker` need `allowUnsafeEngines`, and `shell.workspace`
 * must be an existing directory when `run_command` is enabled (so a wrong path fails at start-up
 * instead of on the model's first command).
 * @throws SandboxError (`SANDBOX_INVALID_CONFIG`) naming the field and the path.
 */
export function checkMcpSettings(settings: SandboxMcpSettings): void {
  if ((settings.engine === "vm" || settings.engine === "worker") && !settings.allowUnsafeEngines) {
    throw invalid(
      `engine: "${settings.engine}" runs the code in the server's process, where one fatal V8 error (out of memory) ends the server and every session; use "isolate" or "spawn", or set "allowUnsafeEngines": true to accept that`,
    );
  }
  if (!settings.enabledTools.includes("run_command")) return;
  const workspace = settings.shell.workspace;
  let reason: string;
  try {
    if (statSync(workspace).isDirectory()) return;
    reason = "is not a directory";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    reason = code === "ENOENT" ? "does not exist" : `cannot be read (${code ?? "error"})`;
  }
  throw invalid(
    `shell.workspace: ${workspace} ${reason}; create it or name an existing directory (commands run there)`,
  );
}

function invalid(reason: string, cause?: unknown): SandboxError {
  return new SandboxError(SANDBOX_CODES.INVALID_CONFIG, `sandbox-mcp config: ${reason}`, {
    ...(cause === undefined ? {} : { cause }),
    details: { reason },
  });
}
