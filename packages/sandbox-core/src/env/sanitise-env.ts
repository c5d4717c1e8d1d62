/** Key fragments that mark a variable as sensitive (case-insensitive substring match). */
export const SENSITIVE_ENV_FRAGMENTS: readonly string[] = Object.freeze([
  "SECRET",
  "KEY",
  "TOKEN",
  "PASSWORD",
  "CREDENTIAL",
  "AUTH",
]);

/** Identity-revealing keys dropped by name (case-insensitive). */
export const IDENTITY_ENV_KEYS: readonly string[] = Object.freeze(["HOME", "USER", "SHELL", "LOGNAME"]);

const SENSITIVE = new RegExp(SENSITIVE_ENV_FRAGMENTS.join("|"), "i");
const IDENTITY = new Set(IDENTITY_ENV_KEYS);

/**
 * A copy of `env` without sensitive or identity-revealing variables: every key
 * containing SECRET, KEY, TOKEN, PASSWORD, CREDENTIAL or AUTH (any case) and
 * HOME, USER, SHELL and LOGNAME. Entries whose value is `undefined` are
 * dropped too. The input is never modified.
 *
 * @example
 * sanitiseEnv({ PATH: "/usr/bin", GITHUB_TOKEN: "x", HOME: "/root" }); // { PATH: "/usr/bin" }
 */
export function sanitiseEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const kept: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || SENSITIVE.test(key) || IDENTITY.has(key.toUpperCase())) continue;
    kept.push([key, value]);
  }
  return Object.fromEntries(kept);
}
