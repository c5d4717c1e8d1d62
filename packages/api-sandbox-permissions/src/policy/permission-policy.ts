import { z } from "zod";
import { PERMISSION_CODES, PermissionError } from "../error-codes/permission-codes.js";
import { compileFetchRule, type FetchRule } from "../fetch-rules/fetch-pattern.js";
import { CanonicalisationError } from "../fs-rules/canonicalise-path.js";
import { compileFsRule, type FsRule, fsPatternProblem } from "../fs-rules/fs-pattern.js";

/** Schema of one `policy.fs[]` entry as written. */
export const FsPermissionSchema = z.strictObject({
  path: z
    .string()
    .min(1)
    .superRefine((value, ctx) => {
      const problem = fsPatternProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
    }),
  access: z.enum(["read", "write"]),
});

/** A tool name as `policy.tools[]` grants it: a JavaScript identifier (what the guest calls as `tools.<name>`). */
const ToolNameSchema = z
  .string()
  .regex(/^[A-Za-z_$][\w$]*$/, "must be a tool name (a JavaScript identifier)");

/** Schema of a permission policy as written; every list defaults to empty (deny everything). */
export const PermissionPolicySchema = z.strictObject({
  fs: z.array(FsPermissionSchema).default([]),
  fetch: z
    .array(
      z
        .string()
        .min(1)
        .superRefine((value, ctx) => {
          const compiled = compileFetchRule(value);
          if (typeof compiled === "string") ctx.addIssue({ code: "custom", message: compiled });
        }),
    )
    .default([]),
  /** Host tools the plugin may call, by exact name (no patterns). */
  tools: z.array(ToolNameSchema).default([]),
});

/**
 * A permission policy as users write it, e.g.
 * `{ fs: [{ path: "data/**", access: "read" }], fetch: ["api.example.com"], tools: ["getWeather"] }`.
 */
export type PermissionPolicyInput = z.input<typeof PermissionPolicySchema>;

/** A validated policy with every rule compiled (canonical fs bases, normalised fetch hosts). */
export interface ResolvedPermissionPolicy {
  readonly fs: readonly FsRule[];
  readonly fetch: readonly FetchRule[];
  /** Granted tool names. */
  readonly tools: readonly string[];
}

/** `["fs", 2, "access"]` → `policy.fs[2].access`. */
export function formatPolicyPath(segments: readonly PropertyKey[]): string {
  let out = "policy";
  for (const segment of segments) {
    out += typeof segment === "number" ? `[${segment}]` : `.${String(segment)}`;
  }
  return out;
}

function invalid(field: string, reason: string, cause?: unknown): PermissionError {
  return new PermissionError(
    PERMISSION_CODES.INVALID_POLICY,
    `Invalid permission policy: ${field} ${reason}. Fix that entry (see the policy syntax in the README)`,
    { details: { field, reason }, ...(cause === undefined ? {} : { cause }) },
  );
}

/**
 * Validate and compile a policy. Relative fs patterns are resolved against `cwd`.
 *
 * @throws PermissionError `PERMISSION_INVALID_POLICY` naming the first bad entry, e.g. `policy.fs[2].access`.
 */
export function resolvePermissionPolicy(input: unknown, cwd: string): ResolvedPermissionPolicy {
  const parsed = PermissionPolicySchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = formatPolicyPath(issue?.path ?? []);
    throw invalid(field, issue === undefined ? "is invalid" : `is invalid: ${issue.message}`);
  }
  const fs = parsed.data.fs.map((entry, index) => {
    try {
      return compileFsRule(entry.path, entry.access, cwd);
    } catch (error) {
      const errno = error instanceof CanonicalisationError ? error.errno : "EUNKNOWN";
      throw invalid(`policy.fs[${index}].path`, `cannot be canonicalised (${errno})`, error);
    }
  });
  const fetch = parsed.data.fetch.map((pattern) => compileFetchRule(pattern) as FetchRule);
  return { fs, fetch, tools: [...new Set(parsed.data.tools)] };
}
