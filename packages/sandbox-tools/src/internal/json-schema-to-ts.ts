// JSON Schema → TypeScript type text, for the declarations of the guest's
// `tools` global. Written here rather than taken from json-schema-to-typescript
// (the maintained generator): that one pulls prettier, lodash, glob and a
// $ref resolver that fetches files and URLs, to do what is ~200 lines of
// mapping for the subset tool schemas use — and a declaration generator must
// never fetch anything. What is not mapped becomes `unknown`, which is always
// valid TypeScript and never a lie.

/** Where converted schemas put the type aliases that recursive `$ref`s need. */
export interface AliasScope {
  /** Names taken so far, across every schema of one declaration text. */
  readonly used: Set<string>;
  /** `type Name = …;` lines, in the order they were made. */
  readonly lines: string[];
}

/** A TypeScript type and how tightly it binds, so unions and intersections get parentheses only where needed. */
interface TsType {
  text: string;
  /** 0 a union, 1 an intersection, 2 anything that binds tighter (names, literals, arrays, object types). */
  rank: 0 | 1 | 2;
  /** The members of a union, so a union of unions comes out flat. */
  members?: readonly TsType[];
}

/** The key a schema may carry to name a TypeScript type JSON Schema cannot express; only these values count. */
export const TS_TYPE_KEYWORD = "x-suaveplan-ts";
const TS_TYPES: ReadonlySet<string> = new Set(["Date", "bigint", "undefined"]);

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const INLINE_MAX = 80;
const MAX_DEPTH = 64;
const MAX_NODES = 20_000;

const UNKNOWN: TsType = { text: "unknown", rank: 2 };
const NEVER: TsType = { text: "never", rank: 2 };

interface State {
  readonly root: unknown;
  readonly rootName: string;
  readonly scope: AliasScope;
  /** `$ref`s that refer to themselves through their own expansion: rendered by alias name. */
  readonly recursive: Set<string>;
  readonly names: Map<string, string>;
  nodes: number;
}

/**
 * The TypeScript type of values `schema` accepts, laid out for `indent` (the
 * indentation of the line the type starts on). `rootName` names the alias of
 * the schema itself should it refer to itself (`$ref: "#"`); aliases that
 * recursive references need are added to `scope`.
 */
export function jsonSchemaToTs(schema: unknown, rootName: string, scope: AliasScope, indent: string): string {
  const state: State = { root: schema, rootName, scope, recursive: new Set(), names: new Map(), nodes: 0 };
  // Find the references that recur: each pass may find more, as an alias's own
  // body is expanded with the references found so far cut.
  for (let pass = 0; pass < 8; pass++) {
    const before = state.recursive.size;
    state.nodes = 0;
    render(schema, state, ["#"], indent, 0);
    if (state.recursive.size === before) break;
  }
  state.nodes = 0;
  const text = state.recursive.has("#")
    ? aliasName(state, "#")
    : render(schema, state, ["#"], indent, 0).text;
  for (const pointer of state.recursive) {
    const name = aliasName(state, pointer);
    const target = pointer === "#" ? schema : resolvePointer(schema, pointer);
    state.nodes = 0;
    const body = render(target, state, [pointer], "", 0).text;
    scope.lines.push(`type ${name} = ${body};`);
  }
  return text;
}

function render(
  schema: unknown,
  state: State,
  stack: readonly string[],
  indent: string,
  depth: number,
): TsType {
  state.nodes++;
  if (schema === true) return UNKNOWN;
  if (schema === false) return NEVER;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return UNKNOWN;
  if (depth > MAX_DEPTH || state.nodes > MAX_NODES) return UNKNOWN;
  const s = schema as Record<string, unknown>;

  const marker = s[TS_TYPE_KEYWORD];
  if (typeof marker === "string" && TS_TYPES.has(marker)) return nullable(s, { text: marker, rank: 2 });

  if (typeof s.$ref === "string") return renderRef(s.$ref, state, stack, indent, depth);

  let base: TsType;
  if ("const" in s) base = literal(s.const);
  else if (Array.isArray(s.enum)) base = union(s.enum.map(literal));
  else base = renderTypes(s, state, stack, indent, depth);

  const alternatives = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  const parts: TsType[] = [];
  if (alternatives !== undefined) {
    parts.push(union(alternatives.map((item) => render(item, state, stack, indent, depth + 1))));
  }
  if (Array.isArray(s.allOf)) {
    for (const item of s.allOf) parts.push(render(item, state, stack, indent, depth + 1));
  }
  if (isNever(s.not)) return NEVER;
  const result = parts.length === 0 ? base : intersection(base === UNKNOWN ? parts : [base, ...parts]);
  return nullable(s, result);
}

function renderRef(
  ref: string,
  state: State,
  stack: readonly string[],
  indent: string,
  depth: number,
): TsType {
  if (!ref.startsWith("#")) return UNKNOWN;
  const pointer = ref === "#" || ref === "#/" ? "#" : ref;
  if (state.recursive.has(pointer) || stack.includes(pointer)) {
    state.recursive.add(pointer);
    return { text: aliasName(state, pointer), rank: 2 };
  }
  const target = pointer === "#" ? state.root : resolvePointer(state.root, pointer);
  if (target === undefined) return UNKNOWN;
  return render(target, state, [...stack, pointer], indent, depth + 1);
}

function renderTypes(
  s: Record<string, unknown>,
  state: State,
  stack: readonly string[],
  indent: string,
  depth: number,
): TsType {
  let types: unknown[];
  if (typeof s.type === "string") types = [s.type];
  else if (Array.isArray(s.type)) types = s.type;
  else if ("properties" in s || "additionalProperties" in s || "patternProperties" in s) types = ["object"];
  else if ("items" in s || "prefixItems" in s) types = ["array"];
  else return UNKNOWN;
  return union(
    types.map((type): TsType => {
      switch (type) {
        case "string":
          return { text: "string", rank: 2 };
        case "number":
        case "integer":
          return { text: "number", rank: 2 };
        case "boolean":
          return { text: "boolean", rank: 2 };
        case "null":
          return { text: "null", rank: 2 };
        case "object":
          return renderObject(s, state, stack, indent, depth);
        case "array":
          return renderArray(s, state, stack, indent, depth);
        default:
          return UNKNOWN;
      }
    }),
  );
}

function renderObject(
  s: Record<string, unknown>,
  state: State,
  stack: readonly string[],
  indent: string,
  depth: number,
): TsType {
  const inner = `${indent}  `;
  const required = new Set(Array.isArray(s.required) ? s.required.filter((k) => typeof k === "string") : []);
  const entries: Array<{ key: string; schema: unknown }> = [];
  if (isRecord(s.properties)) {
    for (const key of Object.keys(s.properties)) entries.push({ key, schema: s.properties[key] });
  } else if (isRecord(s.propertyNames) && s.additionalProperties !== undefined) {
    // A record over a closed set of keys (`z.record(z.enum([…]), …)`): one property per key.
    const names = keyNames(s.propertyNames);
    if (names !== undefined) for (const key of names) entries.push({ key, schema: s.additionalProperties });
  }
  const members: Array<{ doc: string[]; text: string }> = [];
  const valueTypes: TsType[] = [];
  for (const { key, schema } of entries) {
    const type = render(schema, state, stack, inner, depth + 1);
    valueTypes.push(type);
    const optional = required.has(key) ? "" : "?";
    members.push({ doc: docLines(schema), text: `${propertyKey(key)}${optional}: ${type.text};` });
  }
  const extra = extraType(s, state, stack, inner, depth);
  if (extra !== undefined) {
    if (members.length === 0) return { text: `Record<string, ${extra.text}>`, rank: 2 };
    // An index signature must admit every named property's type too.
    const someOptional = entries.some(({ key }) => !required.has(key));
    const index = union([extra, ...valueTypes, ...(someOptional ? [UNDEFINED] : [])]);
    members.push({ doc: [], text: `[key: string]: ${index.text};` });
  } else if (members.length === 0) {
    return {
      text: s.additionalProperties === false ? "Record<string, never>" : "Record<string, unknown>",
      rank: 2,
    };
  }
  return objectType(members, indent);
}

const UNDEFINED: TsType = { text: "undefined", rank: 2 };

/** The type of properties beyond the named ones, or `undefined` when there are none to declare. */
function extraType(
  s: Record<string, unknown>,
  state: State,
  stack: readonly string[],
  indent: string,
  depth: number,
): TsType | undefined {
  if (isRecord(s.propertyNames) && !isRecord(s.properties) && keyNames(s.propertyNames) !== undefined) {
    return undefined;
  }
  const types: TsType[] = [];
  const additional = s.additionalProperties;
  if (additional !== undefined && additional !== false)
    types.push(render(additional, state, stack, indent, depth + 1));
  if (isRecord(s.patternProperties)) {
    for (const value of Object.values(s.patternProperties))
      types.push(render(value, state, stack, indent, depth + 1));
  }
  if (types.length > 0) return union(types);
  // `{ type: "object" }` alone: any object.
  if (!isRecord(s.properties) && additional === undefined) return UNKNOWN;
  return undefined;
}

function renderArray(
  s: Record<string, unknown>,
  state: State,
  stack: readonly string[],
  indent: string,
  depth: number,
): TsType {
  // 2020-12 tuples are `prefixItems` (+ `items` for the rest); draft-07 tuples are an `items` array (+ `additionalItems`).
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : undefined;
  const rest = Array.isArray(s.prefixItems)
    ? s.items
    : Array.isArray(s.items)
      ? s.additionalItems
      : undefined;
  if (prefix === undefined) {
    if (s.items === undefined) return { text: "unknown[]", rank: 2 };
    const item = render(s.items, state, stack, indent, depth + 1);
    return { text: `${wrap(item, 2)}[]`, rank: 2 };
  }
  const minItems = typeof s.minItems === "number" ? s.minItems : 0;
  const maxItems = typeof s.maxItems === "number" ? s.maxItems : undefined;
  const elements = prefix.map((item, index) => {
    const type = render(item, state, stack, indent, depth + 1);
    return index < minItems ? type.text : `${wrap(type, 2)}?`;
  });
  if (rest !== false && (maxItems === undefined || maxItems > prefix.length)) {
    const restType =
      rest === undefined || rest === true ? UNKNOWN : render(rest, state, stack, indent, depth + 1);
    if (restType !== NEVER) elements.push(`...${wrap(restType, 2)}[]`);
  }
  return { text: `[${elements.join(", ")}]`, rank: 2 };
}

/** `{ a: string; b?: number }` on one line when short and undocumented, else one member a line. */
function objectType(members: ReadonlyArray<{ doc: string[]; text: string }>, indent: string): TsType {
  if (members.every((m) => m.doc.length === 0)) {
    const inline = `{ ${members.map((m) => m.text.slice(0, -1)).join("; ")} }`;
    if (inline.length <= INLINE_MAX && !inline.includes("\n")) return { text: inline, rank: 2 };
  }
  const inner = `${indent}  `;
  const lines = ["{"];
  for (const member of members) {
    lines.push(...tsDoc(member.doc, inner));
    lines.push(`${inner}${member.text}`);
  }
  lines.push(`${indent}}`);
  return { text: lines.join("\n"), rank: 2 };
}

/** TSDoc comment lines (`/** … *\/`) for `doc` at `indent`; none when `doc` is empty. */
export function tsDoc(doc: readonly string[], indent: string): string[] {
  if (doc.length === 0) return [];
  const lines = doc.flatMap((line) => line.split(/\r?\n/)).map((line) => line.replaceAll("*/", "*\\/"));
  if (lines.length === 1) return [`${indent}/** ${lines[0]} */`];
  return [
    `${indent}/**`,
    ...lines.map((line) => (line === "" ? `${indent} *` : `${indent} * ${line}`)),
    `${indent} */`,
  ];
}

/** What a property's TSDoc says: its `description`, `@default` and `@deprecated`. */
function docLines(schema: unknown): string[] {
  if (!isRecord(schema)) return [];
  const doc: string[] = [];
  if (typeof schema.description === "string" && schema.description.trim() !== "")
    doc.push(schema.description.trim());
  if ("default" in schema) {
    const text = jsonText(schema.default);
    if (text !== undefined) doc.push(`@default ${text}`);
  }
  if (schema.deprecated === true) doc.push("@deprecated");
  return doc;
}

function keyNames(propertyNames: Record<string, unknown>): string[] | undefined {
  if (typeof propertyNames.const === "string") return [propertyNames.const];
  if (Array.isArray(propertyNames.enum) && propertyNames.enum.every((k) => typeof k === "string")) {
    return propertyNames.enum as string[];
  }
  return undefined;
}

function literal(value: unknown): TsType {
  if (value === null) return { text: "null", rank: 2 };
  switch (typeof value) {
    case "string":
      return { text: JSON.stringify(value), rank: 2 };
    case "boolean":
      return { text: String(value), rank: 2 };
    case "number":
      return Number.isFinite(value) ? { text: String(value), rank: 2 } : { text: "number", rank: 2 };
    default:
      return UNKNOWN;
  }
}

function nullable(s: Record<string, unknown>, type: TsType): TsType {
  return s.nullable === true ? union([type, { text: "null", rank: 2 }]) : type;
}

function union(types: readonly TsType[]): TsType {
  const members: TsType[] = [];
  const add = (type: TsType): void => {
    if (!members.some((m) => m.text === type.text)) members.push(type);
  };
  for (const type of types) {
    if (type.text === "unknown") return UNKNOWN;
    if (type.text === "never") continue;
    if (type.members !== undefined) type.members.forEach(add);
    else add(type);
  }
  if (members.length === 0) return NEVER;
  if (members.length === 1) return members[0] as TsType;
  return { text: members.map((m) => wrap(m, 1)).join(" | "), rank: 0, members };
}

function intersection(types: readonly TsType[]): TsType {
  const members = types.filter((t) => t.text !== "unknown");
  if (members.some((t) => t.text === "never")) return NEVER;
  if (members.length === 0) return UNKNOWN;
  if (members.length === 1) return members[0] as TsType;
  return { text: members.map((t) => wrap(t, 2)).join(" & "), rank: 1 };
}

/** `type` in parentheses when it binds looser than `rank` needs. */
function wrap(type: TsType, rank: 0 | 1 | 2): string {
  return type.rank < rank ? `(${type.text})` : type.text;
}

function propertyKey(key: string): string {
  return IDENTIFIER.test(key) ? key : JSON.stringify(key);
}

function aliasName(state: State, pointer: string): string {
  const known = state.names.get(pointer);
  if (known !== undefined) return known;
  const last = pointer === "#" ? "" : (pointer.split("/").pop() ?? "");
  const base = pointer === "#" ? state.rootName : `${state.rootName}${pascalCase(decodeSegment(last))}`;
  let name = base;
  for (let n = 2; state.scope.used.has(name); n++) name = `${base}${n}`;
  state.scope.used.add(name);
  state.names.set(pointer, name);
  return name;
}

/** `get_weather` → `GetWeather`, `__schema0` → `Schema0`; letters and digits only, never starting with a digit. */
export function pascalCase(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter((w) => w !== "");
  const joined = words.map((w) => w[0]?.toUpperCase() + w.slice(1)).join("");
  if (joined === "") return "Type";
  return /^[0-9]/.test(joined) ? `T${joined}` : joined;
}

function resolvePointer(root: unknown, pointer: string): unknown {
  let node = root;
  for (const segment of pointer.slice(2).split("/")) {
    if (!isRecord(node) && !Array.isArray(node)) return undefined;
    const key = decodeSegment(segment);
    if (!Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function decodeSegment(segment: string): string {
  let text = segment;
  try {
    text = decodeURIComponent(segment);
  } catch {
    // Keep the raw segment.
  }
  return text.replaceAll("~1", "/").replaceAll("~0", "~");
}

function isNever(not: unknown): boolean {
  return not === true || (isRecord(not) && Object.keys(not).length === 0);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function jsonText(value: unknown): string | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined || text.length > 80 ? undefined : text;
  } catch {
    return undefined;
  }
}
