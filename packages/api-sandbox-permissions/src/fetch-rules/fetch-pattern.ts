/** URL schemes a fetch rule can grant. */
export type FetchScheme = "http:" | "https:";

/** One compiled `policy.fetch[]` entry. */
export interface FetchRule {
  /** The pattern as written in the policy. */
  readonly pattern: string;
  /** `"http:"` or `"https:"`. */
  readonly scheme: FetchScheme;
  /** ASCII (punycode), lower-case host without a trailing dot; IPv6 literals keep their brackets. */
  readonly host: string;
  /** True for `*.host` patterns: any sub-domain, at any depth, but not `host` itself. */
  readonly subdomains: boolean;
  /** The port, or `"*"` for any port. An omitted port means the scheme's default. */
  readonly port: number | "*";
}

const DEFAULT_PORTS: Readonly<Record<FetchScheme, number>> = { "http:": 80, "https:": 443 };
const PATTERN =
  /^(?:(?<scheme>[a-z][a-z0-9+.-]*):\/\/)?(?<host>\[[^\]]*\]|[^:/?#@\s]+)(?::(?<port>\*|\d{1,5}))?\/?$/iu;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/u;

function normaliseHost(host: string): string {
  return host.endsWith(".") ? host.slice(0, -1) : host;
}

/**
 * Compile a fetch pattern, or return why it is invalid. Syntax (the only one):
 * `[scheme://]host[:port][/]` where `scheme` is `http` or `https` (default `https`), `host` is a
 * DNS name (IDN allowed; compared in ASCII, case-insensitively, trailing dot ignored), `*.` + a DNS
 * name (sub-domains only), an IPv4 literal or a bracketed IPv6 literal, and `port` is a number or
 * `*` (default: the scheme's default port). Paths, queries, fragments and credentials are refused.
 */
export function compileFetchRule(pattern: string): FetchRule | string {
  const match = PATTERN.exec(pattern.trim());
  if (match?.groups === undefined) {
    return "must look like `[http(s)://]host[:port]` (no path, query, fragment or credentials)";
  }
  const scheme = `${(match.groups.scheme ?? "https").toLowerCase()}:`;
  if (scheme !== "http:" && scheme !== "https:") return "scheme must be http or https";
  let rawHost = match.groups.host ?? "";
  const subdomains = rawHost.startsWith("*.");
  if (subdomains) rawHost = rawHost.slice(2);
  if (rawHost.includes("*")) return "`*` is only allowed as a leading `*.` label";
  let parsed: URL;
  try {
    parsed = new URL(`${scheme}//${rawHost}`);
  } catch {
    return "host is not a valid host name or IP literal";
  }
  const host = normaliseHost(parsed.hostname);
  if (host === "") return "host must not be empty";
  if (subdomains && (IPV4.test(host) || host.startsWith("[")))
    return "`*.` cannot be combined with an IP literal";
  let port: number | "*" = DEFAULT_PORTS[scheme];
  const rawPort = match.groups.port;
  if (rawPort === "*") port = "*";
  else if (rawPort !== undefined) {
    port = Number(rawPort);
    if (port < 1 || port > 65_535) return "port must be between 1 and 65535 or `*`";
  }
  return { pattern, scheme, host, subdomains, port };
}

/** A request URL reduced to what the rules compare. */
export interface FetchTarget {
  /** The normalised `href` of the very parse the other fields come from. */
  readonly href: string;
  readonly scheme: string;
  readonly host: string;
  readonly port: number;
}

/**
 * Parse a request URL with WHATWG `URL` (IDN → punycode, case folding, IPv4 forms such as
 * `0x7f.1` → `127.0.0.1`, IPv6 compression) and reduce it to scheme, host and effective port.
 * Returns a reason string when the URL cannot be checked: unparsable, a scheme other than
 * http/https, or userinfo (`https://allowed.example@evil.example` is refused outright rather
 * than judged by its real host, so a misleading URL never passes review by eye).
 */
export function toFetchTarget(url: string | URL): FetchTarget | string {
  let parsed: URL;
  try {
    parsed = typeof url === "string" ? new URL(url) : new URL(url.href);
  } catch {
    return "invalid-url";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "unsupported-scheme";
  if (parsed.username !== "" || parsed.password !== "") return "userinfo";
  const scheme = parsed.protocol;
  const port = parsed.port === "" ? DEFAULT_PORTS[scheme] : Number(parsed.port);
  return { href: parsed.href, scheme, host: normaliseHost(parsed.hostname), port };
}

/** True when `rule` grants `target`. */
export function matchesFetchRule(rule: FetchRule, target: FetchTarget): boolean {
  if (rule.scheme !== target.scheme) return false;
  if (rule.port !== "*" && rule.port !== target.port) return false;
  if (rule.subdomains) return target.host.endsWith(`.${rule.host}`);
  return target.host === rule.host;
}
