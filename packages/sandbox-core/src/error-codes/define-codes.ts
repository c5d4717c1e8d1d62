/** The frozen record produced by {@link defineCodes}: `{ NAME: "PREFIX_NAME" }`. */
export type CodeRecord<Prefix extends string, Name extends string> = {
  readonly [K in Name]: `${Prefix}_${K}`;
};

const CODE_PART = /^[A-Z][A-Z0-9_]*$/;

/**
 * Declare a closed set of error codes under one prefix.
 *
 * @example
 * const CODES = defineCodes("SAND_VM", ["EVAL_REJECTED"]);
 * CODES.EVAL_REJECTED; // "SAND_VM_EVAL_REJECTED"
 */
export function defineCodes<const Prefix extends string, const Name extends string>(
  prefix: Prefix,
  names: readonly Name[],
): CodeRecord<Prefix, Name> {
  if (!CODE_PART.test(prefix)) {
    throw new TypeError(`defineCodes: prefix ${JSON.stringify(prefix)} must be UPPER_SNAKE_CASE`);
  }
  const record: Record<string, string> = {};
  for (const name of names) {
    if (!CODE_PART.test(name)) {
      throw new TypeError(`defineCodes: code name ${JSON.stringify(name)} must be UPPER_SNAKE_CASE`);
    }
    if (Object.hasOwn(record, name)) {
      throw new TypeError(`defineCodes: code name ${JSON.stringify(name)} is declared twice`);
    }
    record[name] = `${prefix}_${name}`;
  }
  return Object.freeze(record) as CodeRecord<Prefix, Name>;
}
