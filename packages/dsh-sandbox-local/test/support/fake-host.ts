import type { HostRunResult, LocalHost } from "../../src/host/local-host.js";

/** One scripted answer of {@link createFakeHost}'s `run`. */
export type FakeRun = (file: string, args: readonly string[]) => HostRunResult;

/**
 * A scripted {@link LocalHost} for what cannot run here (macOS, Windows, a
 * kernel that forbids user namespaces). Records every `run` call.
 */
export function createFakeHost(
  overrides: Partial<Omit<LocalHost, "run">> & {
    run?: FakeRun;
    files?: Record<string, string>;
    executables?: Record<string, string>;
    envVars?: Record<string, string>;
  } = {},
): LocalHost & { calls: { file: string; args: readonly string[] }[] } {
  const calls: { file: string; args: readonly string[] }[] = [];
  const files = overrides.files ?? {};
  return {
    platform: overrides.platform ?? "linux",
    uid: "uid" in overrides ? overrides.uid : 1000,
    kernelRelease: overrides.kernelRelease ?? "6.8.0",
    calls,
    run(file, args) {
      calls.push({ file, args });
      return overrides.run?.(file, args) ?? { status: 0, stdout: "", stderr: "" };
    },
    readText: (path) => files[path],
    exists: (path) => path in files,
    findExecutable: (name) => overrides.executables?.[name] ?? (name.startsWith("/") ? name : undefined),
    env: (name) => overrides.envVars?.[name],
  };
}
