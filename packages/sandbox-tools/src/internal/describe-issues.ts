import type { z } from "zod";

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const ZOD_PREFIX = /^Invalid (?:input|option): /;
const SHOWN_ISSUES = 3;

/** A field as JavaScript would read it: `input.city`, `input.items[0]`, `input["a b"]`. */
export function fieldPath(root: string, path: readonly PropertyKey[]): string {
  let text = root;
  for (const key of path) {
    if (typeof key === "number") text += `[${key}]`;
    else if (typeof key === "string" && IDENTIFIER.test(key)) text += `.${key}`;
    else text += `[${JSON.stringify(String(key))}]`;
  }
  return text;
}

/**
 * One sentence naming each offending field, e.g.
 * `input.city: expected string, received number; input.days: Too small: expected number to be >=1`.
 * Shows the first three issues and counts the rest. The same text for a zod
 * schema and for the zod schema converted from a JSON Schema.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root: string): string {
  const shown = issues
    .slice(0, SHOWN_ISSUES)
    .map((issue) => `${fieldPath(root, issue.path)}: ${issueText(issue)}`);
  if (issues.length > SHOWN_ISSUES) shown.push(`and ${issues.length - SHOWN_ISSUES} more`);
  return shown.join("; ");
}

function issueText(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_union") return unionText(issue);
  return issue.message.replace(ZOD_PREFIX, "");
}

/** `expected string | null, received number` when every branch failed on the type alone. */
function unionText(issue: z.core.$ZodIssueInvalidUnion): string {
  const expected: string[] = [];
  let received: string | undefined;
  for (const branch of issue.errors) {
    const [only] = branch;
    if (branch.length !== 1 || only === undefined || only.code !== "invalid_type" || only.path.length > 0) {
      return "matches none of the allowed types";
    }
    if (!expected.includes(only.expected)) expected.push(only.expected);
    received ??= /, received (.+)$/.exec(only.message)?.[1];
  }
  if (expected.length === 0) return "matches none of the allowed types";
  return received === undefined
    ? `expected ${expected.join(" | ")}`
    : `expected ${expected.join(" | ")}, received ${received}`;
}
