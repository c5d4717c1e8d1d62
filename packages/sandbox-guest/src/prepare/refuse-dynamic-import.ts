import { type PreparedGuestCode, prepareGuestCode } from "@suaveplan/sandbox-core/code-transformer";

/**
 * Why `source` may not run, when it uses dynamic `import()` (or an `import`
 * declaration): in `node:vm` the promise of `import()` rejects with a
 * host-realm error on Node 20 — its `constructor.constructor` is the host's
 * `Function`, a known escape — so every engine refuses it before running, the
 * same way (`SANDBOX_CODE_BLOCKED`). `import` cannot be spelled with escapes,
 * so code without the word needs no parse. `analysed`: the code already
 * prepared with `analyse` (its parse is used instead of a new one).
 */
export function refuseDynamicImport(source: string, analysed?: PreparedGuestCode): string | undefined {
  if (!source.includes("import")) return undefined;
  // The caller's analysis of this very code when it has one (the execution's one parse), else a parse.
  const prepared =
    analysed !== undefined &&
    analysed.code === source &&
    (analysed.findings !== undefined || analysed.syntaxError !== undefined)
      ? analysed
      : prepareGuestCode(source, { analyse: true });
  if (prepared.syntaxError !== undefined) {
    // Fail closed: code the parser cannot read is not proven free of import().
    return `the code mentions \`import\` and does not parse (${prepared.syntaxError.message}), so it cannot be shown free of import()`;
  }
  const finding = prepared.findings?.find((found) => found.rule === "block-import-dynamic");
  if (finding === undefined) return undefined;
  const line = source.slice(0, finding.start).split("\n").length;
  return `import() and import declarations are not available in the sandbox (line ${line})`;
}
