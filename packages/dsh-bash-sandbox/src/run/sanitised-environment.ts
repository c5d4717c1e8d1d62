import { sanitiseEnv } from "@suaveplan/sandbox-core/env";

/**
 * Name fragments dropped under `"sanitised"` on top of `sanitiseEnv`'s rules
 * (case-insensitive): passwords under short names (`MYSQL_PWD`, `SMTP_PASS`,
 * `*_PASSWD`, `*_PASSPHRASE`), tokens that are not called tokens (`*_JWT`,
 * `*_COOKIE`, `SENTRY_DSN`), private material, and session handles such as
 * `DBUS_SESSION_BUS_ADDRESS`. `PWD` and `OLDPWD` themselves are kept.
 */
const EXTRA_SENSITIVE = /PASS|PWD|JWT|COOKIE|DSN|PRIVATE|SESSION/i;
const KEPT_DESPITE_FRAGMENT = new Set(["PWD", "OLDPWD"]);
/** Shell start-up hooks: they would run host code (or override builtins) before the command. */
const SHELL_HOOK = /^(BASH_ENV|ENV|SHELLOPTS|BASHOPTS|BASH_FUNC_.*)$/i;
/** A URL carrying a password in its user-info (`scheme://user:password@host`). */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/\s@:]*:[^/\s@]+@/i;

/**
 * The `"sanitised"` environment: `source` (default `process.env`) without
 * identity keys (`HOME`, `USER`, `SHELL`, `LOGNAME`) and secrets —
 * `sanitiseEnv`'s rules (keys containing SECRET/KEY/TOKEN/PASSWORD/CREDENTIAL/AUTH)
 * plus PASS/PWD (not `PWD`/`OLDPWD`)/JWT/COOKIE/DSN/PRIVATE/SESSION, values
 * that are URLs with a password, and shell start-up hooks.
 */
export function sanitisedEnvironment(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(sanitiseEnv(source))) {
    if (EXTRA_SENSITIVE.test(key) && !KEPT_DESPITE_FRAGMENT.has(key.toUpperCase())) continue;
    if (SHELL_HOOK.test(key) || URL_WITH_PASSWORD.test(value)) continue;
    kept[key] = value;
  }
  return kept;
}
