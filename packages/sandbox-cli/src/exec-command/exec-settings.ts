import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { readUnitFlag } from "../cli/unit-flags.js";
import { UsageError } from "../cli/usage-error.js";
import { MAX_DURATION_MS } from "./duration.js";

/** What a `--settings FILE` may hold: the same knobs as the flags (srt-style). */
export interface ExecSettings {
  mode?: "read-only" | "workspace-write";
  workspace?: string;
  network?: "allow" | "deny";
  allowDomains?: string[];
  allowWrite?: string[];
  denyRead?: string[];
  denySecrets?: boolean;
  env?: string[];
  timeoutMs?: number;
}

const SettingsSchema = z.strictObject({
  mode: z.enum(["read-only", "workspace-write"]).optional(),
  workspace: z.string().min(1).optional(),
  network: z.enum(["allow", "deny"]).optional(),
  allowDomains: z.array(z.string().min(1)).optional(),
  allowWrite: z.array(z.string().min(1)).optional(),
  denyRead: z.array(z.string().min(1)).optional(),
  denySecrets: z.boolean().optional(),
  env: z.array(z.string().min(1)).optional(),
  timeout: z.string().min(1).optional(),
});

/**
 * Read and check a settings file (JSON). Relative paths in it (`workspace`,
 * `allowWrite`, `denyRead`) are resolved against the file's own directory.
 * @throws UsageError naming the file and the bad field.
 */
export function readExecSettings(file: string, cwd: string): ExecSettings {
  const path = resolve(cwd, file);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`--settings ${file}: cannot read it (${(error as NodeJS.ErrnoException).code})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--settings ${file}: not JSON (${(error as Error).message})`);
  }
  const parsed = SettingsSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const keys = issue !== undefined && "keys" in issue ? (issue.keys as string[]) : [];
    const field = [...(issue?.path ?? []), ...keys].join(".") || "(top level)";
    throw new UsageError(`--settings ${file}: ${field}: ${issue?.message ?? "invalid"}`);
  }
  const base = dirname(path);
  const abs = (p: string): string => (p.startsWith("~/") ? p : resolve(base, p));
  const { timeout, ...rest } = parsed.data;
  const settings = Object.fromEntries(
    Object.entries(rest).filter(([, value]) => value !== undefined),
  ) as ExecSettings;
  if (rest.workspace !== undefined) settings.workspace = resolve(base, rest.workspace);
  if (rest.allowWrite !== undefined) settings.allowWrite = rest.allowWrite.map(abs);
  if (rest.denyRead !== undefined) settings.denyRead = rest.denyRead.map(abs);
  if (timeout !== undefined) {
    const reading = readUnitFlag(timeout, "duration", MAX_DURATION_MS);
    if (!reading.ok)
      throw new UsageError(`--settings ${file}: timeout: ${JSON.stringify(timeout)} ${reading.reason}`);
    settings.timeoutMs = reading.value;
  }
  return settings;
}
