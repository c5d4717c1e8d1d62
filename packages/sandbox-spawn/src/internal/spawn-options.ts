import { type SpawnOptions, spawn } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { sanitiseEnv } from "@suaveplan/sandbox-core/env";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { memoryLimitBelowMinimum, parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import { parseMaxSpares } from "@suaveplan/sandbox-core/spares";
import type { EngineLimits } from "@suaveplan/sandbox-core/types";
import type { SpawnedChild } from "../spawn-engine/race-child.js";
import { isNodeRuntimeVariable, MIN_HEAP_MIB } from "./node-args.js";

/**
 * Starts a child process; the seam tests use for what a real child cannot
 * produce on demand. Same shape as `node:child_process.spawn`, the default.
 */
export type ProcessSpawner = (
  command: string,
  args: readonly string[],
  options: SpawnOptions,
) => SpawnedChild;

/** Constructor options of `SpawnEngine`. */
export interface SpawnEngineOptions {
  /** Wall-clock limit per execution, in ms (sync code, promises and timers together). Default 5000. */
  timeout?: number;
  /** V8 heap limit of each child, in bytes; becomes `--max-old-space-size` (whole MiB, at least 8). Default 128 MiB. */
  memoryLimit?: number;
  /** Console output cap per execution, in UTF-8 bytes. Default 1 MiB. */
  maxOutputSize?: number;
  /** Absolute path of the runner script the child runs. Default: this package's `dist/runner-main.js`. */
  runnerPath?: string;
  /**
   * Node binary the child runs. Default `process.execPath`. On Linux, where
   * util-linux `prlimit` is installed, an absolute `execPath` is started
   * through it: it sets the child's CPU-time limit (see `cpuLimitSeconds`) and
   * execs node, so the spawner sees `prlimit` as the command.
   */
  execPath?: string;
  /** Environment to sanitise for the child (see `sanitiseEnv`). Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Starts the child. Default `node:child_process.spawn`. */
  spawner?: ProcessSpawner;
  /** Keep pre-started, single-use children ready so their boot is off the caller's path. Default true. */
  preStart?: boolean;
  /**
   * Pre-started children kept ready at most (default 4; 0 for none, as
   * `preStart: false`). How many are kept follows demand: as many as the most
   * runs in flight at once over the last 5–10 s, at least one. Each is an idle
   * node process (about 40 MB resident).
   */
  maxSpares?: number;
  /** Limit for a child to boot and start the guest code, in ms; not counted in `timeout`. Default 10000. */
  startTimeout?: number;
  /**
   * Run every child confined by an OS sandbox provider — `LocalSandboxProvider`
   * of `@suaveplan/dsh-sandbox-local`, constructed with `network: "deny"` —
   * under a `read-only` policy, on top of the permission model and the
   * sanitised environment. A child whose confined command would keep the
   * network, or that the provider cannot confine, is not started
   * (`SANDBOX_SPAWN_FAILED`). `capabilities.securityBoundary` is true only when
   * the provider's selected backend reports `full` enforcement.
   */
  confinement?: ChildConfinement | undefined;
}

/** What a confined child's command comes back as (`ConfinedArgv` of `@suaveplan/dsh-sandbox`). */
export interface ConfinedCommand {
  readonly argv: readonly string[];
  /** Variables the confinement adds to the child's environment. */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** `"deny"` when the confined command has no network. */
  readonly network?: string | undefined;
  /** Release what the confinement holds for this command (after the child closed). */
  dispose?(): void;
}

/** The part of an OS sandbox provider (`SandboxProvider` of `@suaveplan/dsh-sandbox`) the engine uses. */
export interface ChildConfinement {
  /** The probe result of the backend `confine` uses; throws when none is usable. */
  selectedBackend(): { readonly backend: string; readonly enforcement?: string | undefined };
  confine(argv: string[], policy: { mode: "read-only"; workspaceRoot: string }): ConfinedCommand;
}

/** {@link SpawnEngineOptions} checked, with every default applied. */
export interface ResolvedSpawnOptions {
  limits: EngineLimits;
  runnerPath: string;
  execPath: string;
  /** Sanitised, and without `NODE_*` variables. */
  childEnv: Record<string, string>;
  spawner: ProcessSpawner;
  /** Spares kept at most: 0 with `preStart: false`. */
  maxSpares: number;
  startTimeout: number;
  /** The `prlimit` that sets each child's CPU-time limit, or undefined where there is none. */
  cpuLimiter: string | undefined;
  confinement: ChildConfinement | undefined;
}

const PRLIMIT_PATHS = ["/usr/bin/prlimit", "/bin/prlimit"] as const;

const DEFAULT_START_TIMEOUT_MS = 10_000;
const OPTION_KEYS = new Set([
  "timeout",
  "memoryLimit",
  "maxOutputSize",
  "runnerPath",
  "execPath",
  "env",
  "spawner",
  "preStart",
  "maxSpares",
  "startTimeout",
  "confinement",
]);

/**
 * Check `options` and apply the defaults.
 * @throws SandboxError `SANDBOX_INVALID_CONFIG` naming the option, also when
 * the default runner script is missing (build the package).
 */
export function resolveSpawnOptions(options: SpawnEngineOptions): ResolvedSpawnOptions {
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) invalidConfig(key, "is not a SpawnEngine option");
  }
  const limits = parseEngineLimits(options);
  const tooSmall = memoryLimitBelowMinimum(limits.memoryLimit, "memoryLimit", "spawn", MIN_HEAP_MIB);
  if (tooSmall !== undefined) throw new SandboxError(SANDBOX_CODES.INVALID_CONFIG, tooSmall);
  const spawner = options.spawner ?? ((command, args, spawnOptions) => spawn(command, args, spawnOptions));
  if (typeof spawner !== "function") invalidConfig("spawner", "must be a function");
  const execPath = options.execPath ?? process.execPath;
  if (typeof execPath !== "string" || execPath === "") invalidConfig("execPath", "must be a path");
  const runnerPath = resolveRunnerPath(options.runnerPath, options.spawner === undefined);
  const env = options.env ?? process.env;
  if (typeof env !== "object" || env === null) invalidConfig("env", "must be an object of strings");
  const childEnv = Object.fromEntries(
    Object.entries(sanitiseEnv(env)).filter(([key]) => !isNodeRuntimeVariable(key)),
  );
  const preStart = options.preStart ?? true;
  if (typeof preStart !== "boolean") invalidConfig("preStart", "must be a boolean");
  const maxSpares = parseMaxSpares(options.maxSpares, "SpawnEngine");
  const startTimeout = options.startTimeout ?? DEFAULT_START_TIMEOUT_MS;
  if (!Number.isSafeInteger(startTimeout) || startTimeout < 1) {
    invalidConfig("startTimeout", "must be a positive integer (ms)");
  }
  // A relative or missing execPath is spawned as given, so its error stays spawn's own (ENOENT).
  const cpuLimiter =
    process.platform === "linux" && isAbsolute(execPath) && existsSync(execPath)
      ? PRLIMIT_PATHS.find((path) => existsSync(path))
      : undefined;
  const { confinement } = options;
  if (
    confinement !== undefined &&
    (typeof confinement !== "object" ||
      confinement === null ||
      typeof confinement.confine !== "function" ||
      typeof confinement.selectedBackend !== "function")
  ) {
    invalidConfig(
      "confinement",
      "must be an OS sandbox provider (confine and selectedBackend), e.g. a LocalSandboxProvider",
    );
  }
  return {
    limits,
    runnerPath,
    execPath,
    childEnv,
    spawner,
    maxSpares: preStart ? maxSpares : 0,
    startTimeout,
    cpuLimiter,
    confinement,
  };
}

function resolveRunnerPath(option: string | undefined, realSpawner: boolean): string {
  if (option !== undefined && (typeof option !== "string" || option === "")) {
    invalidConfig("runnerPath", "must be a path");
  }
  const candidates =
    option === undefined
      ? ["./runner-main.js", "../../dist/runner-main.js"].map((url) =>
          fileURLToPath(new URL(url, import.meta.url)),
        )
      : [isAbsolute(option) ? option : resolve(option)];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) {
    if (!realSpawner) return candidates[0] as string;
    if (option === undefined) {
      invalidConfig(
        "runnerPath",
        `was not given and the runner script is missing (looked for ${candidates.join(", ")}); build @suaveplan/sandbox-spawn (pnpm build) or pass runnerPath`,
      );
    }
    invalidConfig("runnerPath", `does not exist (${candidates[0]})`);
  }
  const real = realpathSync(found);
  // Node's --allow-fs-read takes a comma-separated list.
  if (real.includes(",")) invalidConfig("runnerPath", `must not contain a comma (${real})`);
  return real;
}

function invalidConfig(field: string, reason: string): never {
  throw new SandboxError(SANDBOX_CODES.INVALID_CONFIG, `Invalid SpawnEngine option ${field}: ${reason}`);
}
