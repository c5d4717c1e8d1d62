/** Quote each argument for a POSIX shell and join them, so `bash -c` runs exactly this argv. */
export function shellQuote(argv: readonly string[]): string {
  return argv
    .map((arg) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`))
    .join(" ");
}
