import { describe, expect, it } from "vitest";
import { compileFetchRule, type FetchRule, matchesFetchRule, toFetchTarget } from "./fetch-pattern.js";

function allows(pattern: string, url: string): boolean {
  const rule = compileFetchRule(pattern);
  if (typeof rule === "string") throw new Error(rule);
  const target = toFetchTarget(url);
  return typeof target !== "string" && matchesFetchRule(rule, target);
}

describe("fetch patterns", () => {
  it("compiles scheme, IDN host and default port", () => {
    expect(compileFetchRule("BÜCHER.example.")).toEqual<FetchRule>({
      pattern: "BÜCHER.example.",
      scheme: "https:",
      host: "xn--bcher-kva.example",
      subdomains: false,
      port: 443,
    });
    expect(compileFetchRule("http://[::1]:*")).toMatchObject({ scheme: "http:", host: "[::1]", port: "*" });
  });

  it("matches scheme, host and port exactly", () => {
    expect([
      allows("api.example.com", "https://api.example.com/v1?q=1"),
      allows("api.example.com", "http://api.example.com/"),
      allows("api.example.com", "https://api.example.com:8443/"),
      allows("api.example.com:8443", "https://api.example.com:8443/"),
      allows("http://127.0.0.1:*", "http://127.0.0.1:5555/x"),
      allows("api.example.com", "https://API.Example.COM./"),
    ]).toEqual([true, false, false, true, true, true]);
  });

  it("normalises IDN hosts in both pattern and URL", () => {
    expect([
      allows("bücher.example", "https://xn--bcher-kva.example/"),
      allows("xn--bcher-kva.example", "https://BÜCHER.example/"),
    ]).toEqual([true, true]);
  });

  it("`*.` matches sub-domains at any depth but not the apex", () => {
    expect([
      allows("*.example.com", "https://a.example.com/"),
      allows("*.example.com", "https://a.b.example.com/"),
      allows("*.example.com", "https://example.com/"),
      allows("*.example.com", "https://evilexample.com/"),
    ]).toEqual([true, true, false, false]);
  });

  it("compares IPv4 and IPv6 literals in their canonical form", () => {
    expect([
      allows("http://127.0.0.1:8080", "http://0x7f.1:8080/"),
      allows("http://127.0.0.1:8080", "http://2130706433:8080/"),
      allows("http://[::1]:8080", "http://[0:0:0:0:0:0:0:1]:8080/"),
      allows("http://127.0.0.1:8080", "http://[::ffff:127.0.0.1]:8080/"),
    ]).toEqual([true, true, true, false]);
  });

  it("refuses userinfo tricks, other schemes and junk", () => {
    expect([
      toFetchTarget("https://allowed.example@evil.example/"),
      toFetchTarget("https://user:pw@allowed.example/"),
      toFetchTarget("file:///etc/passwd"),
      toFetchTarget("data:text/plain,hi"),
      toFetchTarget("not a url"),
    ]).toEqual(["userinfo", "userinfo", "unsupported-scheme", "unsupported-scheme", "invalid-url"]);
  });

  it("names what is wrong with a malformed pattern", () => {
    expect([
      compileFetchRule("https://api.example.com/v1"),
      compileFetchRule("ftp://example.com"),
      compileFetchRule("user@example.com"),
      compileFetchRule("a.*.example.com"),
      compileFetchRule("*.127.0.0.1"),
      compileFetchRule("example.com:70000"),
    ]).toEqual([
      "must look like `[http(s)://]host[:port]` (no path, query, fragment or credentials)",
      "scheme must be http or https",
      "must look like `[http(s)://]host[:port]` (no path, query, fragment or credentials)",
      "`*` is only allowed as a leading `*.` label",
      "`*.` cannot be combined with an IP literal",
      "port must be between 1 and 65535 or `*`",
    ]);
  });
});
