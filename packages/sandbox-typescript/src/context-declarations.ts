/**
 * Declarations of the globals an execution's `context` (and data modules)
 * put in the guest realm, each typed from its value: `{ n: 41 }` becomes
 * `declare const n: number;`. Values a type cannot be read from are `any`.
 *
 * @example
 * contextDeclarations({ user: { name: "ada", tags: ["x"] } });
 * // 'declare const user: { "name": string; "tags": string[] };'
 */
export function contextDeclarations(globals: Readonly<Record<string, unknown>> | undefined): string {
  if (globals === undefined || globals === null) return "";
  return Object.keys(globals)
    .filter((name) => IDENTIFIER.test(name))
    .map((name) => `declare const ${name}: ${typeOf(globals[name], 0)};`)
    .join("\n");
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const MAX_DEPTH = 8;

function typeOf(value: unknown, depth: number): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
    case "bigint":
    case "undefined":
      return typeof value;
    case "object":
      break;
    default:
      return "any";
  }
  if (depth >= MAX_DEPTH) return "any";
  if (Array.isArray(value)) {
    const members = [...new Set(value.map((item) => typeOf(item, depth + 1)))];
    if (members.length === 0) return "unknown[]";
    return members.length === 1 ? `${members[0]}[]` : `(${members.join(" | ")})[]`;
  }
  if (value instanceof Date) return "Date";
  if (value instanceof Map) return "Map<any, any>";
  if (value instanceof Set) return "Set<any>";
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null)
    return "any";
  const fields = Object.keys(value).map(
    (key) => `${JSON.stringify(key)}: ${typeOf((value as Record<string, unknown>)[key], depth + 1)}`,
  );
  return fields.length === 0 ? "{}" : `{ ${fields.join("; ")} }`;
}
