import { isAbsolute, resolve } from "node:path";
import type { MeterProvider } from "@opentelemetry/api";
import type { PermissionChecker, PermissionPolicyInput } from "@suaveplan/api-sandbox-permissions";
import { type LogEntry, MAX_TIMER_MS } from "@suaveplan/sandbox-core/types";
import type { ToolSet } from "@suaveplan/sandbox-tools";
import { SAND_VM_CODES, VmSandboxError } from "../errors/sand-vm-codes.js";
import type { VmSandboxProxies } from "../proxies/install-capability-proxies.js";

/** Options of `createVmSandbox` as users write them. */
export interface VmSandboxOptions {
  /** The plugin's entry ES module (`.mjs`/`.js`), absolute or relative to `process.cwd()`. Its folder is the plugin root. */
  pluginModulePath: string;
  /**
   * The permission policy (relative fs patterns resolve against the plugin root), or a ready
   * `PermissionChecker` (then its own `cwd` applies).
   */
  policy: PermissionPolicyInput | PermissionChecker;
  /** Which capability globals to install and with which host adapters. Default: both, real adapters. */
  proxies?: VmSandboxProxies;
  /**
   * Host tools the plugin calls as `await tools.<name>(input)` (the Vercel AI SDK `tool()` shape:
   * `description`, `inputSchema` (zod 4 or JSON Schema), `outputSchema?`,
   * `execute(input, { abortSignal, toolCallId })`). Each call is checked against `policy.tools`
   * first, then validated, then run; see `calls()` for the journal. Default: none (no `tools` global).
   */
  tools?: ToolSet;
  /**
   * Time budget in ms (default 5000) for loading the plugin and for each call, and the longest
   * plugin code may run without yielding; exceeding the latter stops and disposes the sandbox.
   */
  timeoutMs?: number;
  /** Memory limit of the worker hosting the context, in MiB (default 128): its heap, and its heap plus array buffers and Wasm memory (see the README). */
  memoryLimitMb?: number;
  /**
   * Largest result one call may return, in bytes of its copy (membrane codec text, 2 bytes a
   * character). A larger result rejects that call with `SAND_VM_OUTPUT_EXCEEDED`; the sandbox goes
   * on. Default: no limit.
   */
  maxOutputBytes?: number;
  /** Receives the plugin's `console.*` lines. Default: dropped. */
  onLog?: (entry: LogEntry) => void;
  /** Meter provider for `plugin.permission_denied_total` when `policy` is not a checker. Default: global. */
  meterProvider?: MeterProvider;
}

/** Options after validation and defaults. */
export interface ResolvedVmSandboxOptions {
  pluginModulePath: string;
  policy: PermissionPolicyInput | PermissionChecker;
  proxies: VmSandboxProxies;
  tools: ToolSet | undefined;
  timeoutMs: number;
  memoryLimitMb: number;
  maxOutputBytes: number | undefined;
  onLog: ((entry: LogEntry) => void) | undefined;
  meterProvider: MeterProvider | undefined;
}

function invalid(field: string, reason: string): VmSandboxError {
  return new VmSandboxError(
    SAND_VM_CODES.INVALID_OPTIONS,
    `Invalid createVmSandbox options: ${field} ${reason}`,
    {
      details: { field },
    },
  );
}

function isAdapterLike(value: unknown, kind: "object" | "function"): boolean {
  return (
    typeof value === "boolean" ||
    (kind === "function" ? typeof value === "function" : typeof value === "object" && value !== null)
  );
}

/** Validate `createVmSandbox` options. @throws VmSandboxError `SAND_VM_INVALID_OPTIONS` naming the field. */
export function resolveVmSandboxOptions(input: unknown): ResolvedVmSandboxOptions {
  if (typeof input !== "object" || input === null) throw invalid("options", "must be an object");
  const o = input as Record<string, unknown>;
  const known = new Set([
    "pluginModulePath",
    "policy",
    "proxies",
    "tools",
    "timeoutMs",
    "memoryLimitMb",
    "maxOutputBytes",
    "onLog",
    "meterProvider",
  ]);
  for (const key of Object.keys(o))
    if (!known.has(key)) throw invalid(`options.${key}`, "is not a known option");
  if (typeof o.pluginModulePath !== "string" || o.pluginModulePath === "") {
    throw invalid("options.pluginModulePath", "must be a non-empty path string");
  }
  if (typeof o.policy !== "object" || o.policy === null)
    throw invalid("options.policy", "must be a policy object or a PermissionChecker");
  const proxies = (o.proxies ?? {}) as Record<string, unknown>;
  if (typeof proxies !== "object" || proxies === null) throw invalid("options.proxies", "must be an object");
  for (const key of Object.keys(proxies))
    if (key !== "fs" && key !== "fetch")
      throw invalid(`options.proxies.${key}`, "is not a capability (fs, fetch)");
  if (proxies.fs !== undefined && !isAdapterLike(proxies.fs, "object"))
    throw invalid("options.proxies.fs", "must be a boolean or an FsHostAdapter");
  if (proxies.fetch !== undefined && !isAdapterLike(proxies.fetch, "function"))
    throw invalid("options.proxies.fetch", "must be a boolean or a fetch function");
  const timeoutMs = o.timeoutMs ?? 5_000;
  if (
    typeof timeoutMs !== "number" ||
    !Number.isInteger(timeoutMs) ||
    timeoutMs < 1 ||
    timeoutMs > MAX_TIMER_MS
  ) {
    throw invalid(
      "options.timeoutMs",
      `must be an integer number of ms between 1 and ${MAX_TIMER_MS} (got ${String(o.timeoutMs)})`,
    );
  }
  const memoryLimitMb = o.memoryLimitMb ?? 128;
  if (typeof memoryLimitMb !== "number" || !Number.isInteger(memoryLimitMb) || memoryLimitMb < 8) {
    throw invalid("options.memoryLimitMb", `must be an integer >= 8 (got ${String(o.memoryLimitMb)})`);
  }
  const maxOutputBytes = o.maxOutputBytes;
  if (
    maxOutputBytes !== undefined &&
    (typeof maxOutputBytes !== "number" || !Number.isSafeInteger(maxOutputBytes) || maxOutputBytes < 1)
  ) {
    throw invalid(
      "options.maxOutputBytes",
      `must be a positive integer number of bytes (got ${String(maxOutputBytes)})`,
    );
  }
  if (o.tools !== undefined && (typeof o.tools !== "object" || o.tools === null))
    throw invalid("options.tools", "must be an object of tool definitions");
  if (o.onLog !== undefined && typeof o.onLog !== "function")
    throw invalid("options.onLog", "must be a function");
  return {
    pluginModulePath: isAbsolute(o.pluginModulePath) ? o.pluginModulePath : resolve(o.pluginModulePath),
    policy: o.policy as PermissionPolicyInput | PermissionChecker,
    proxies: proxies as VmSandboxProxies,
    tools: o.tools as ToolSet | undefined,
    timeoutMs,
    memoryLimitMb,
    maxOutputBytes,
    onLog: o.onLog as ((entry: LogEntry) => void) | undefined,
    meterProvider: o.meterProvider as MeterProvider | undefined,
  };
}
