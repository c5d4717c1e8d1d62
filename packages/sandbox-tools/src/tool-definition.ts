import type { z } from "zod";

/**
 * A JSON Schema object (draft 2020-12 unless its `$schema` names draft-07 or
 * draft-04), e.g. `{ type: "object", properties: { city: { type: "string" } }, required: ["city"] }`.
 */
export type JsonSchemaObject = { readonly [keyword: string]: unknown };

/**
 * A tool's input or output schema: a zod 4 schema (`zod` or `zod/mini`), a
 * {@link JsonSchemaObject}, the AI SDK's `jsonSchema()` (or a lazy schema, a
 * function returning one), or a Standard Schema v1 of another library (its
 * `~standard.validate` validates; declared as `unknown` unless it offers
 * `~standard.jsonSchema`).
 */
export type ToolSchema = z.core.$ZodType | JsonSchemaObject | StandardSchemaLike | (() => unknown);

/** A Standard Schema (v1) validator of any library, as far as a tool schema needs it. */
export interface StandardSchemaLike {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => unknown;
  };
}

/** What a schema validates to: the zod output type, or `unknown` for a JSON Schema. */
export type SchemaOutput<S> = S extends z.core.$ZodType ? z.core.output<S> : unknown;

/** The second argument of a tool's `execute` (the shape of the Vercel AI SDK's tool-call options). */
export interface ToolExecutionOptions {
  /**
   * Aborted when the execution ends (result, timeout, cancel, memory) while
   * this call is pending; the call's late answer is then dropped.
   */
  readonly abortSignal: AbortSignal;
  /** The call's id, unique within the execution (the journal's `id`). */
  readonly toolCallId: string;
  /** Always empty: a call from sandboxed code has no chat history. Present for tools written for the AI SDK. */
  // biome-ignore lint/suspicious/noExplicitAny: typed as the AI SDK's `ModelMessage[]` would need `ai`; `any` lets its tools' `execute` accept these options.
  readonly messages: any[];
  /** Always `undefined`: a sandboxed call has no AI SDK tool context. Present for tools written for the AI SDK. */
  // biome-ignore lint/suspicious/noExplicitAny: an AI SDK tool's `execute` declares its own context type.
  readonly context: any;
}

/**
 * A host function the guest may call as `await tools.<name>(input)`. The same
 * shape as the Vercel AI SDK's `tool()`, so tools defined for an agent plug in
 * unchanged.
 *
 * `execute` gets the input as `inputSchema` parsed it (zod defaults and
 * transforms applied) — a copy made by the codec, never a guest object. What
 * it returns (or resolves with) is checked against `outputSchema` when given
 * and copied into the guest. What it throws reaches the guest as a `ToolError`
 * whose `message` is the thrown error's message, passed through as it is (no
 * stack; cut to half of `maxToolPayloadBytes` characters): do not put secrets
 * or host paths in it. The same holds for a zod refinement that throws, and
 * for custom zod error messages, which reach the guest in validation errors.
 */
// biome-ignore lint/suspicious/noExplicitAny: a tool set holds tools of every input type, as the AI SDK's ToolSet does.
export interface ToolDefinition<Input = any, Output = unknown> {
  /**
   * What the tool does; becomes the TSDoc of `tools.<name>` in {@link toolDeclarations}.
   * The AI SDK's function form is called once with `{ context: undefined }`.
   */
  // biome-ignore lint/suspicious/noExplicitAny: the AI SDK's function form declares its own context type.
  description?: string | ((options: { context: any }) => string) | undefined;
  /** Checked before `execute` runs; a failure reaches the guest as a `ToolError` naming the field. */
  inputSchema: ToolSchema;
  /** Checked on the way back when given; a failure reaches the guest as a `ToolError`. */
  outputSchema?: ToolSchema | undefined;
  /**
   * The AI SDK's `needsApproval`: `true`, or a function
   * `(input, { toolCallId, messages }) => boolean | Promise<boolean>` asked
   * after the input is validated. A call that needs approval runs only when
   * every `approveToolCall` hook returns `true` (each sees
   * `needsApproval: true` in its request); with no hook configured it is
   * refused (`denied`, fail closed). A function that throws or returns a
   * non-boolean denies the call.
   */
  needsApproval?: boolean | NeedsApprovalFunction<Input> | undefined;
  /**
   * Runs the call on the host. An async generator (the AI SDK's preliminary
   * results) is run to its end: the guest gets the last value it yielded.
   */
  execute(input: Input, options: ToolExecutionOptions): Output | PromiseLike<Output> | AsyncIterable<Output>;
}

/**
 * The function form of {@link ToolDefinition.needsApproval}. Declared as a
 * method so a function written for the AI SDK (whose options also carry its
 * `context`, here absent) is accepted as it is.
 */
export type NeedsApprovalFunction<Input> = {
  check(
    input: Input,
    // biome-ignore lint/suspicious/noExplicitAny: as in ToolExecutionOptions, so the AI SDK's needsApproval functions fit.
    options: { toolCallId: string; messages: any[]; context: any },
  ): boolean | PromiseLike<boolean>;
}["check"];

/** Tools by name; every name is a JavaScript identifier (the guest calls `tools.<name>`). */
export type ToolSet = Record<string, ToolDefinition>;

/**
 * Define one tool with `execute`'s input typed from a zod `inputSchema`
 * (`unknown` for a JSON Schema). Returns `tool` itself; the same role as the
 * AI SDK's `tool()` helper.
 */
export function defineTool<Schema extends ToolSchema, Output>(tool: {
  description?: string | undefined;
  inputSchema: Schema;
  outputSchema?: ToolSchema | undefined;
  execute(input: SchemaOutput<Schema>, options: ToolExecutionOptions): Output | PromiseLike<Output>;
}): ToolDefinition<SchemaOutput<Schema>, Output> {
  return tool;
}
