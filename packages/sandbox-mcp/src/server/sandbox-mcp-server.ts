import { dirname, resolve } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { runConfinedBash } from "@suaveplan/dsh-bash-sandbox";
import { type SandboxExecutionPolicy, SandboxPolicyService } from "@suaveplan/dsh-sandbox";
import { LocalSandboxProvider, PROXY_DENIAL_SIGNATURES } from "@suaveplan/dsh-sandbox-local";
import { createSandbox, loadToolModule, type Sandbox, type ToolSet } from "@suaveplan/sandbox";
import { isSuaveplanError } from "@suaveplan/sandbox-core/error-codes";
import { describeGuestGlobals, normalizeModelCode } from "@suaveplan/sandbox-core/guest-script";
import { z } from "zod";
import { checkMcpSettings, type McpToolName, type SandboxMcpSettings } from "../config/mcp-config.js";
import { type CallSlots, createCallSlots } from "../internal/call-slots.js";
import { createLogProgress } from "../internal/log-progress.js";
import { javascriptResult } from "./javascript-result.js";
import { VERSION } from "./version.js";

/** Options of {@link createSandboxMcpServer} beyond the settings. */
export interface SandboxMcpServerOptions {
  /** Host tools given directly (they replace `settings.tools`, the module). */
  tools?: ToolSet;
  /** The environment commands take the allow-listed names (`settings.shell.env.pass`) from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/** A running sandbox MCP server: connect it to a transport; `close()` releases everything. */
export interface SandboxMcpServer extends AsyncDisposable {
  /** The SDK's server, with the enabled tools registered. */
  readonly server: McpServer;
  /** The MCP tools it exposes. */
  readonly tools: readonly McpToolName[];
  /** Connect to a transport (stdio, Streamable HTTP, in-memory). */
  connect(transport: Transport): Promise<void>;
  /** Close the connection, end running executions and commands, destroy the sandbox and the provider. Idempotent. */
  close(): Promise<void>;
}

const LogSchema = z.object({ level: z.string(), message: z.string() });
const CallSchema = z.object({
  tool: z.string(),
  status: z.string(),
  input: z.unknown().optional(),
  output: z.unknown().optional(),
  error: z.object({ name: z.string(), message: z.string() }).optional(),
  durationMs: z.number(),
});
const UsageSchema = z.object({
  wallMs: z.number(),
  cpuMs: z.number().optional(),
  heapBytes: z.number().optional(),
  outputBytes: z.number(),
  toolCalls: z.number(),
  toolBytes: z.number(),
});
const RunJavascriptOutput = {
  success: z.boolean(),
  normalised: z
    .array(z.string())
    .optional()
    .describe("What was changed in the code before it ran (Markdown fences removed, main() called …)"),
  result: z
    .unknown()
    .optional()
    .describe(
      'The completion value as JSON; what JSON cannot say is a one-key tag ({"$bigint":"5"}, {"$map":[[k, v]]}, {"$date":…}, {"$undefined":true} …), and {"$cut":…} marks what was cut',
    ),
  error: z
    .object({
      code: z.string(),
      message: z.string(),
      line: z.number().optional(),
      column: z.number().optional(),
    })
    .optional(),
  logs: z.array(LogSchema),
  calls: z.array(CallSchema),
  usage: UsageSchema.optional(),
  truncated: z.string().optional().describe("What was cut to keep the response within the output limit"),
};
const OUTCOMES = ["ok", "failed", "denied", "runner-failure", "timeout", "cancelled", "unavailable"] as const;
const RunCommandOutput = {
  outcome: z.enum(OUTCOMES),
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
  stdout: z.string(),
  stderr: z.string(),
  truncated: z.boolean(),
  detail: z.string().optional().describe("The stderr line (or error) that proved the outcome"),
  deniedBy: z.string().optional().describe("Which policy denied it, when the outcome is denied"),
  enforcement: z.object({
    mode: z.string(),
    workspaceRoot: z.string(),
    network: z.string(),
    backend: z.string().optional(),
    enforcement: z.string().optional(),
  }),
};

/**
 * Build the MCP server over a sandbox and the local process sandbox:
 * `run_javascript` (code mode: the host tools' TypeScript declarations are in
 * its description), `run_command` (`bash -c` confined by
 * `@suaveplan/dsh-sandbox-local` through `runConfinedBash`) and
 * `describe_sandbox`. Calls are served concurrently up to
 * `settings.maxConcurrentCalls`; a client's `notifications/cancelled` aborts
 * the execution or kills the command. Guest and command failures are tool
 * results with `isError: true`, never protocol errors.
 * @throws SandboxError (`SANDBOX_INVALID_CONFIG`) when the tools module cannot be loaded or its tools
 * are malformed, `shell.workspace` is not a directory, or `vm`/`worker` lack `allowUnsafeEngines`.
 */
export async function createSandboxMcpServer(
  settings: SandboxMcpSettings,
  options: SandboxMcpServerOptions = {},
): Promise<SandboxMcpServer> {
  checkMcpSettings(settings);
  const tools =
    options.tools ??
    (settings.tools === undefined
      ? undefined
      : await loadToolModule(settings.tools, dirname(settings.tools)));
  const enabled = new Set(settings.enabledTools);
  const slots = createCallSlots(settings.maxConcurrentCalls);
  const sandbox =
    enabled.has("run_javascript") || enabled.has("describe_sandbox") ? makeSandbox() : undefined;
  let provider: LocalSandboxProvider | undefined;
  const shellProvider = (): LocalSandboxProvider => {
    provider ??= new LocalSandboxProvider({ network: settings.shell.network });
    return provider;
  };
  const server = new McpServer(
    { name: "suaveplan-sandbox", version: VERSION },
    {
      instructions:
        "Run JavaScript or TypeScript in a sandbox (run_javascript) and shell commands confined by the OS (run_command). Call describe_sandbox to see the security tier and limits in force.",
    },
  );

  if (enabled.has("run_javascript") && sandbox !== undefined) {
    registerRunJavascript(server, sandbox, settings, slots);
  }
  if (enabled.has("run_command")) {
    registerRunCommand(server, settings, slots, shellProvider, options.env ?? process.env);
  }
  if (enabled.has("describe_sandbox") && sandbox !== undefined) {
    registerDescribeSandbox(server, sandbox, settings, shellProvider);
  }

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      try {
        await server.close();
      } finally {
        await sandbox?.destroy();
        provider?.dispose();
      }
    })();
    return closing;
  };
  return {
    server,
    tools: settings.enabledTools,
    connect: (transport) => server.connect(transport),
    close,
    [Symbol.asyncDispose]: close,
  };

  function makeSandbox(): Sandbox {
    return createSandbox({
      engine: settings.engine,
      timeout: settings.limits.timeoutMs,
      memoryLimit: settings.limits.memoryBytes,
      maxOutputSize: settings.limits.maxOutputBytes,
      ...(tools === undefined ? {} : { tools }),
      ...(settings.limits.maxToolCalls === undefined ? {} : { maxToolCalls: settings.limits.maxToolCalls }),
    });
  }
}

function registerRunJavascript(
  server: McpServer,
  sandbox: Sandbox,
  settings: SandboxMcpSettings,
  slots: CallSlots,
): void {
  const declarations = sandbox.toolDeclarations();
  // "No tools" however toolDeclarations() goes on after it (it may list the guest globals as comments).
  const hasTools = !/(?:^|\n)declare const tools: \{\s*\};/.test(declarations);
  const globals = describeGuestGlobals();
  const listsGlobals = hasTools && declarations.includes(globals.split("\n")[0] ?? globals);
  const description = [
    `Run a JavaScript (or TypeScript, with language: "typescript") program in a sandbox (engine ${settings.engine}) and return its completion value, console output, host-tool calls and usage.`,
    "The value of the last expression is the result; top-level await works. There is no require, import, process, fs or network.",
    `Limits: ${settings.limits.timeoutMs} ms by default (at most ${settings.limits.maxTimeoutMs} ms), ${settings.limits.memoryBytes / 1024 / 1024} MiB of heap; the whole response (result, logs and calls, as JSON text and as structured content) is kept within ${settings.limits.maxOutputBytes} bytes, and "truncated" says what was cut.`,
    hasTools
      ? `The program can call these host tools with await (TypeScript declarations):\n\`\`\`ts\n${declarations}\n\`\`\``
      : "No host tools are configured.",
    ...(listsGlobals ? [] : [globals]),
  ].join("\n");
  server.registerTool(
    "run_javascript",
    {
      title: "Run JavaScript in a sandbox",
      description,
      inputSchema: {
        code: z.string().min(1).describe("The program; its last expression is the result"),
        language: z.enum(["javascript", "typescript"]).optional().describe('Default "javascript"'),
        timeoutMs: z
          .number()
          .int()
          .positive()
          .max(settings.limits.maxTimeoutMs)
          .optional()
          .describe(`Wall-clock limit in ms (default ${settings.limits.timeoutMs})`),
      },
      outputSchema: RunJavascriptOutput,
      annotations: { readOnlyHint: false, openWorldHint: false },
    },
    async ({ code, language, timeoutMs }, extra) => {
      const release = await slots.acquire(extra.signal);
      if (release === undefined) return cancelledResult();
      const progressToken = extra._meta?.progressToken;
      const progress =
        progressToken === undefined
          ? undefined
          : createLogProgress(({ progress, message }) =>
              extra.sendNotification({
                method: "notifications/progress",
                params: { progressToken, progress, message },
              }),
            );
      try {
        // Models wrap code in Markdown fences, export it or leave main() uncalled; "normalised" says what changed.
        const normalised = normalizeModelCode(code);
        const run = await sandbox.execute(
          normalised.code,
          {},
          {
            language: language ?? "javascript",
            timeout: timeoutMs ?? settings.limits.timeoutMs,
            signal: extra.signal,
            ...(progress === undefined ? {} : { onLog: (entry) => progress.line(entry.message) }),
          },
        );
        // What is waiting goes out before the result: the client drops progress after it.
        await progress?.finish();
        return javascriptResult(run, settings.limits.maxOutputBytes, normalised.changes);
      } finally {
        void progress?.finish();
        release();
      }
    },
  );
}

function registerRunCommand(
  server: McpServer,
  settings: SandboxMcpSettings,
  slots: CallSlots,
  provider: () => LocalSandboxProvider,
  hostEnv: NodeJS.ProcessEnv,
): void {
  const { shell } = settings;
  const policies = new SandboxPolicyService({ defaultMode: shell.mode, workspaceRoot: shell.workspace });
  const network = typeof shell.network === "string" ? shell.network : "allow-list";
  // An allow-list, not a deny-list: a secret's name cannot be guessed from a pattern.
  const env: Record<string, string> = {};
  for (const name of shell.env.pass) {
    const value = hostEnv[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, shell.env.set);
  server.registerTool(
    "run_command",
    {
      title: "Run a confined shell command",
      description: [
        "Run a command with bash -c, confined by the operating system's sandbox, and return its stdout, stderr, exit code and outcome.",
        `File policy: ${shell.mode === "read-only" ? "read-only (nothing on disk can be written)" : "workspace-write (only the workspace and a private temp directory are writable)"}; network: ${network}; it runs in the workspace (${shell.workspace}) unless cwd names a directory inside it.`,
        `Limits: ${shell.timeoutMs} ms by default (at most ${shell.maxTimeoutMs} ms); ${shell.maxOutputBytes} bytes kept per stream. Outcome is ok, failed (non-zero exit), denied (the sandbox blocked it), runner-failure, timeout or unavailable.`,
      ].join("\n"),
      inputSchema: {
        command: z.string().min(1).describe("A bash command line"),
        cwd: z
          .string()
          .min(1)
          .optional()
          .describe("Directory inside the workspace (relative to it, or absolute)"),
        timeoutMs: z
          .number()
          .int()
          .positive()
          .max(shell.maxTimeoutMs)
          .optional()
          .describe(`Wall-clock limit in ms (default ${shell.timeoutMs})`),
      },
      outputSchema: RunCommandOutput,
      annotations: { readOnlyHint: shell.mode === "read-only", openWorldHint: network !== "deny" },
    },
    async ({ command, cwd, timeoutMs }, extra) => {
      const release = await slots.acquire(extra.signal);
      if (release === undefined) return cancelledResult();
      let policy: SandboxExecutionPolicy | undefined;
      try {
        policy = policies.resolve();
        const root = policy.workspaceRoot;
        const progressToken = extra._meta?.progressToken;
        let bytes = 0;
        let lastProgress = 0;
        const onOutput =
          progressToken === undefined
            ? undefined
            : (chunk: string): void => {
                bytes += Buffer.byteLength(chunk);
                const now = Date.now();
                if (now - lastProgress < 100) return;
                lastProgress = now;
                void extra
                  .sendNotification({
                    method: "notifications/progress",
                    params: { progressToken, progress: bytes, message: `${bytes} bytes of output so far` },
                  })
                  .catch(() => undefined);
              };
        const result = await runConfinedBash(
          command,
          { ...policy, writableRoots: shell.writableRoots } as SandboxExecutionPolicy,
          {
            provider: provider(),
            ...(cwd === undefined ? {} : { cwd: resolve(root, cwd) }),
            env,
            timeout: timeoutMs ?? shell.timeoutMs,
            maxOutputBytes: shell.maxOutputBytes,
            signal: extra.signal,
            ...(onOutput === undefined ? {} : { onStdout: onOutput, onStderr: onOutput }),
          },
        );
        const outcome = extra.signal.aborted ? "cancelled" : result.timedOut ? "timeout" : result.outcome;
        const structured: Record<string, unknown> = {
          outcome,
          exitCode: result.exitCode,
          signal: result.signal,
          stdout: result.stdout,
          stderr: result.stderr,
          truncated: result.truncated,
          ...(result.detail === undefined ? {} : { detail: result.detail }),
          ...(outcome === "denied" ? { deniedBy: deniedBy(result, policy.mode) } : {}),
          enforcement: {
            mode: policy.mode,
            workspaceRoot: root,
            network,
            ...(result.backend === undefined ? {} : { backend: result.backend }),
            enforcement: result.enforcement,
          },
        };
        return {
          content: [{ type: "text", text: JSON.stringify(structured, null, 2) }],
          structuredContent: structured,
          ...(outcome === "ok" ? {} : { isError: true }),
        };
      } catch (error) {
        if (!isSuaveplanError(error)) throw error;
        const unavailable = error.code === "SANDBOX_UNAVAILABLE";
        const structured = {
          outcome: unavailable ? "unavailable" : "failed",
          exitCode: null,
          signal: null,
          stdout: "",
          stderr: "",
          truncated: false,
          detail: `${error.code}: ${error.message}`,
          enforcement: {
            mode: policy?.mode ?? shell.mode,
            workspaceRoot: policy?.workspaceRoot ?? shell.workspace,
            network,
          },
        };
        return {
          content: [{ type: "text", text: JSON.stringify(structured, null, 2) }],
          structuredContent: structured,
          isError: true,
        };
      } finally {
        release();
      }
    },
  );
}

/** Which policy a denial came from: the cut network, the network allow-list's proxy, or the file-effect mode. */
function deniedBy(
  result: { detail?: string | undefined; backend?: string | undefined; reason?: "network" | undefined },
  mode: string,
): string {
  const { detail, backend } = result;
  if (result.reason === "network") return 'the network policy "deny" (the command has no network)';
  const line = (detail ?? "").toLowerCase();
  if (PROXY_DENIAL_SIGNATURES.some((signature) => line.includes(signature.toLowerCase()))) {
    return "the network allow-list (the sandbox's filtering proxy refused the host)";
  }
  return `the file-effect policy "${mode}"${backend === undefined ? "" : ` (enforced by ${backend})`}`;
}

function registerDescribeSandbox(
  server: McpServer,
  sandbox: Sandbox,
  settings: SandboxMcpSettings,
  provider: () => LocalSandboxProvider,
): void {
  server.registerTool(
    "describe_sandbox",
    {
      title: "Describe the sandbox",
      description:
        "What this server enforces: the JavaScript engine's security tier, the limits in force, and per backend of the process sandbox whether it works here and how completely it enforces the file policy.",
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => {
      // An engine that cannot load here (isolated-vm missing) is reported, not thrown.
      const capabilities = await sandbox.getCapabilities().then(
        (value) => ({ available: true as const, value }),
        (error: unknown) => ({
          available: false as const,
          reason: error instanceof Error ? error.message : String(error),
        }),
      );
      const shellEnabled = settings.enabledTools.includes("run_command");
      const probes = shellEnabled ? provider().probe() : [];
      const description = {
        tools: settings.enabledTools,
        javascript: {
          engine: settings.engine,
          ...(capabilities.available
            ? {
                tier: capabilities.value.tier,
                securityBoundary: capabilities.value.securityBoundary,
                enforcesMemoryLimit: capabilities.value.enforcesMemoryLimit,
                abortsRunningCode: capabilities.value.abortsRunningCode,
              }
            : { unavailable: capabilities.reason }),
          // vm and worker (allowed only by allowUnsafeEngines) run the code in the server's process.
          sharesServerProcess: settings.engine === "vm" || settings.engine === "worker",
          limits: { ...settings.limits },
          maxConcurrentCalls: settings.maxConcurrentCalls,
        },
        ...(shellEnabled
          ? {
              shell: {
                mode: settings.shell.mode,
                workspace: settings.shell.workspace,
                writableRoots: settings.shell.writableRoots,
                network: settings.shell.network,
                timeoutMs: settings.shell.timeoutMs,
                maxTimeoutMs: settings.shell.maxTimeoutMs,
                maxOutputBytes: settings.shell.maxOutputBytes,
                backends: probes.map((p) => ({
                  backend: p.backend,
                  available: p.available,
                  ...(p.enforcement === undefined ? {} : { enforcement: p.enforcement }),
                  ...(p.networkDeny === undefined ? {} : { networkDeny: p.networkDeny }),
                  ...(p.reason === undefined ? {} : { reason: p.reason }),
                })),
                selected: probes.find((p) => p.available)?.backend ?? null,
              },
            }
          : {}),
      };
      return {
        content: [{ type: "text", text: JSON.stringify(description, null, 2) }],
        structuredContent: description,
      };
    },
  );
}

function cancelledResult(): CallToolResult {
  return { content: [{ type: "text", text: "cancelled before it started" }], isError: true };
}
