/** One entry of a network allow-list: an exact host, or `*.` and a domain (its subdomains, not the domain itself). */
const ENTRY = /^(\*\.)?([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Check allow-list entries; returns them lower-cased. Entries are host names
 * (`api.example.com`), wildcard subdomains (`*.example.org`: `a.example.org`
 * and `a.b.example.org`, not `example.org`) or IPv4 literals; no schemes,
 * ports, paths or bare `*`.
 * @returns the normalised entries, or the index and text of the first bad one.
 */
export function checkAllowList(entries: unknown): { ok: string[] } | { index: number; problem: string } {
  if (!Array.isArray(entries) || entries.length === 0) {
    return { index: -1, problem: "must be a non-empty array of host names" };
  }
  const out: string[] = [];
  for (const [index, entry] of entries.entries()) {
    if (typeof entry !== "string") return { index, problem: "must be a string" };
    const host = entry.trim().toLowerCase().replace(/\.$/, "");
    if (!ENTRY.test(host) || host.length > 253) {
      return {
        index,
        problem: `must be a host name such as "api.example.com" or "*.example.org" (no scheme, port or path), got ${JSON.stringify(entry)}`,
      };
    }
    out.push(host);
  }
  return { ok: out };
}

/** True when `host` (as a client sent it) is allowed by the normalised `allow` entries. */
export function hostAllowed(host: string, allow: readonly string[]): boolean {
  const name = host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  return allow.some((entry) =>
    entry.startsWith("*.") ? name.endsWith(entry.slice(1)) && name.length > entry.length - 1 : name === entry,
  );
}
