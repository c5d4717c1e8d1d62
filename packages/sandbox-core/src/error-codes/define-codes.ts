/** The frozen record produced by {@link defineCodes}: `{ NAME: "PREFIX_NAME" }`. */
export type CodeRecord<Prefix extends string, Name extends string> = {
  readonly [K in Name]: `${Prefix}_${K}`;
};

/** Options of {@link defineCodes}. */
export interface DefineCodesOptions {
  /**
   * The npm package that declares these codes and ships their pages as
   * `docs/errors/<CODE>.md`, e.g. `"@suaveplan/sandbox-core"`. Every
   * {@link SuaveplanError} with one of these codes then ends its message with
   * `(<CODE>); see <package>/docs/errors/<CODE>.md`.
   */
  docs?: string;
}

const CODE_PART = /^[A-Z][A-Z0-9_]*$/;
const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

/** Code → package that ships its page; filled by {@link defineCodes}. */
const docsPackages = new Map<string, string>();

/**
 * Declare a closed set of error codes under one prefix.
 *
 * @example
 * const CODES = defineCodes("SAND_VM", ["EVAL_REJECTED"], { docs: "@suaveplan/api-sandbox-vm" });
 * CODES.EVAL_REJECTED; // "SAND_VM_EVAL_REJECTED"
 */
export function defineCodes<const Prefix extends string, const Name extends string>(
  prefix: Prefix,
  names: readonly Name[],
  options: DefineCodesOptions = {},
): CodeRecord<Prefix, Name> {
  if (!CODE_PART.test(prefix)) {
    throw new TypeError(`defineCodes: prefix ${JSON.stringify(prefix)} must be UPPER_SNAKE_CASE`);
  }
  if (options.docs !== undefined && !PACKAGE_NAME.test(options.docs)) {
    throw new TypeError(`defineCodes: docs ${JSON.stringify(options.docs)} must be an npm package name`);
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
  if (options.docs !== undefined) {
    for (const code of Object.values(record)) docsPackages.set(code, options.docs);
  }
  return Object.freeze(record) as CodeRecord<Prefix, Name>;
}

/**
 * Where the page of `code` ships: `"<package>/docs/errors/<CODE>.md"` (a path
 * inside the installed package, e.g. under `node_modules/`), or `undefined`
 * when no {@link defineCodes} call declared `code` with a `docs` package.
 */
export function errorDocsPath(code: string): string | undefined {
  const owner = docsPackages.get(code);
  return owner === undefined ? undefined : `${owner}/docs/errors/${code}.md`;
}

/**
 * `message` ending with its code and where to read about it:
 * `"… (CODE); see <package>/docs/errors/CODE.md"`, or `"… (CODE)"` for a code
 * without a page. A message that already ends with either form (an error
 * re-raised with the same code) is returned unchanged, or completed.
 */
export function withErrorCode(message: string, code: string): string {
  const tag = `(${code})`;
  const docs = errorDocsPath(code);
  const see = docs === undefined ? "" : `; see ${docs}`;
  if (message.endsWith(`${tag}${see}`)) return message;
  if (message.endsWith(tag)) return `${message}${see}`;
  return message === "" ? `${tag}${see}` : `${message} ${tag}${see}`;
}

/**
 * `message` without the trailing ` (CODE)` or ` (CODE); see …/CODE.md` that
 * {@link withErrorCode} adds — for text that is re-coded, e.g. into a
 * `SandboxResult.error`, which ends with its code alone.
 */
export function withoutErrorCode(message: string): string {
  return message.replace(/ \([A-Z][A-Z0-9_]*\)(?:; see \S+)?$/, "");
}
