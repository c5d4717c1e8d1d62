import type { GuestErrorInfo, LogEntry, SandboxModule, SandboxResult } from "@suaveplan/sandbox-core/types";
import type { CallReply } from "@suaveplan/sandbox-guest";
import { z } from "zod";

/**
 * The wire between a caller and a worker. A job carries the execution; the
 * messages travel through each process's inbox (see `inbox.ts`). Values that
 * JSON cannot hold (context, tool inputs and outputs, the result) travel as
 * the guest codec's text, so a `Map`, a `Date` or a cycle arrives as it left.
 */
export const PROTOCOL_VERSION = 2;

/** What a job holds: everything a worker needs to run one execution, and where to send what it produces. */
export const JobDataSchema = z.strictObject({
  v: z.literal(PROTOCOL_VERSION),
  /** The execution id (also the job id). */
  x: z.string(),
  /** The caller's inbox address. */
  caller: z.string(),
  /** Tells this submission from another one with the same execution id. */
  nonce: z.string(),
  engine: z.string(),
  engineOptions: z.record(z.string(), z.unknown()),
  code: z.string(),
  /** The context as codec text. */
  context: z.string(),
  /** The caller's data modules as its registry holds them: JSON of `[[name, codecText], …]`, or "". */
  modulesText: z.string(),
  /** The caller's source modules (JavaScript: TypeScript was erased at registration), in registration order. */
  sourceModules: z.array(z.strictObject({ name: z.string(), source: z.string() })),
  limits: z.strictObject({ timeout: z.number(), memoryLimit: z.number(), maxOutputSize: z.number() }),
  /** The caller's tool names (answered through the caller's inbox). */
  tools: z.array(z.string()),
  maxCallBytes: z.number().optional(),
  maxReplyBytes: z.number().optional(),
});
export type JobData = z.infer<typeof JobDataSchema>;

const ModulePairsSchema = z.array(z.tuple([z.string(), z.string()]));

/** A job's data modules as `[name, codecText]` pairs, or undefined when its `modulesText` is not such a list. */
export function dataModulesOf(modulesText: string): [string, string][] | undefined {
  if (modulesText === "") return [];
  try {
    const parsed = ModulePairsSchema.safeParse(JSON.parse(modulesText));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** A result on the wire: the value as codec text. */
export type WireResult = Omit<SandboxResult, "result"> & { resultText?: string };

/**
 * Worker → caller. `a` is the attempt (the worker's job token, new each time
 * the job is taken) and `w` the worker's inbox address. The first message of
 * an attempt, whatever its kind, tells the caller who runs the job: a `start`
 * goes out only when a run has said nothing else for {@link START_AFTER_MS},
 * so a short run costs one message (its `done`), not two.
 */
export type ToCaller =
  | { t: "start"; x: string; a: string; w: string }
  | { t: "log"; x: string; a: string; w: string; s: number; entry: LogEntry }
  | { t: "call"; x: string; a: string; w: string; n: number; name: string; input: string }
  | { t: "alive"; x: string }
  | { t: "done"; x: string; a: string; w: string; result: WireResult };

/** How long a run may go without a message before its worker announces itself with a `start`. */
export const START_AFTER_MS = 50;

/** Caller → worker. A reply is sandbox-guest's `CallReply`: codec text when `ok`, else `{ name, message, tool }` JSON. */
export type ToWorker =
  | { t: "reply"; x: string; a: string; n: number; reply: CallReply }
  | { t: "cancel"; x: string; reason: string };

/** What the worker sends for an input the guest kernel refused as too large (sandbox-guest's marker text). */
export const INPUT_TOO_LARGE_TEXT = '["!too-large"]';
/** The symbol the engine hands a tool for such an input. */
export const TOOL_INPUT_TOO_LARGE = Symbol.for("suaveplan.sandbox.tool-input-too-large");

export type { GuestErrorInfo, SandboxModule };
