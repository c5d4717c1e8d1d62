// Adversarial review through the public API: URL tricks against the fetch rules and checkedFetch.
// Real HTTP servers on 127.0.0.1; nothing is mocked.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkedFetch, isPermissionError, PermissionChecker } from "../src/index.js";
import { startTestServer, type TestServer } from "./support/http-server.js";

describe("fetch URL tricks", () => {
  const c = () =>
    new PermissionChecker({ fetch: ["http://127.0.0.1:8080", "api.example.com", "*.svc.example"] });
  const allowed = (url: string) => c().checkFetch(url).allowed;

  it("IPv4 spellings of the granted address are the same host; look-alike names are not", () => {
    for (const same of [
      "http://127.0.0.1:8080/",
      "http://2130706433:8080/",
      "http://0x7f.1:8080/",
      "http://0177.0.0.1:8080/",
      "http://127.1:8080/",
    ]) {
      expect(allowed(same), same).toBe(true);
    }
    for (const other of [
      "http://127.0.0.1.nip.io:8080/",
      "http://[::ffff:127.0.0.1]:8080/",
      "http://[::1]:8080/",
      "http://127.0.0.2:8080/",
      "http://127.0.0.1/",
      "https://127.0.0.1:8080/",
    ]) {
      expect(allowed(other), other).toBe(false);
    }
  });

  it("host names: case, trailing dot, explicit default port are the same; homographs and suffix tricks are not", () => {
    for (const same of [
      "https://API.EXAMPLE.COM/x",
      "https://api.example.com./x",
      "https://api.example.com:443/x",
      "https://a.b.svc.example/",
    ]) {
      expect(allowed(same), same).toBe(true);
    }
    for (const other of [
      "https://api.example.com:8443/",
      "http://api.example.com/",
      "https://\u0430pi.example.com/",
      "https://api.example.com.evil.example/",
      "https://evilapi.example.com/",
      "https://svc.example/",
      "https://evilsvc.example/",
    ]) {
      expect(allowed(other), other).toBe(false);
    }
  });

  it("a backslash is a path separator (WHATWG), so the decision and the request name the same host", () => {
    const decision = c().checkFetch("https://api.example.com\\@evil.example/");
    expect(decision.allowed ? new URL(decision.url).host : decision.reason).toBe("api.example.com");
  });

  it("userinfo, non-http schemes and non-string inputs are refused with a reason", () => {
    const reasons = (url: unknown) => {
      const d = c().checkFetch(url as string);
      return d.allowed ? "allowed" : d.reason;
    };
    expect(reasons("https://api.example.com@evil.example/")).toBe("userinfo");
    expect(reasons("https://api.example.com:pw@evil.example/")).toBe("userinfo");
    expect(reasons("https://user@api.example.com/")).toBe("userinfo");
    for (const scheme of [
      "data:text/plain,hi",
      "blob:https://api.example.com/x",
      "file:///etc/passwd",
      "ws://api.example.com/",
      "javascript:alert(1)",
    ]) {
      expect(reasons(scheme), scheme).toBe("unsupported-scheme");
    }
    expect(reasons(new Request("https://api.example.com/"))).toBe("invalid-url");
    expect(reasons({ href: "https://api.example.com/" })).toBe("invalid-url");
  });

  it("a URL object is judged by the same parse that the allowed decision reports", () => {
    class Sneaky extends URL {
      override toString(): string {
        return "https://evil.example/";
      }
    }
    const decision = c().checkFetch(new Sneaky("https://api.example.com/x"));
    expect(decision.allowed ? decision.url : decision.reason).toBe("https://api.example.com/x");
  });
});

describe("checkedFetch against real servers", () => {
  let allowed: TestServer;
  let denied: TestServer;
  beforeEach(async () => {
    denied = await startTestServer((_req, res) => res.end("denied host reached"));
    allowed = await startTestServer((req, res) => {
      if (req.url === "/307-to-denied") res.writeHead(307, { location: `${denied.origin}/x` }).end();
      else if (req.url === "/308-self") res.writeHead(308, { location: "/echo" }).end();
      else if (req.url === "/userinfo")
        res.writeHead(302, { location: `http://a@${allowed.origin.slice(7)}/echo` }).end();
      else if (req.url === "/scheme") res.writeHead(302, { location: "file:///etc/passwd" }).end();
      else if (req.url === "/loop") res.writeHead(302, { location: "/loop" }).end();
      else res.end(`${req.method} ${req.body} ${String(req.headers.authorization)}`);
    });
  });
  afterEach(async () => {
    await Promise.all([allowed.close(), denied.close()]);
  });
  const c = () => new PermissionChecker({ fetch: [allowed.origin] });
  const code = (promise: Promise<unknown>) =>
    promise.then(
      () => "resolved",
      (e: unknown) => (isPermissionError(e) ? e.code : (e as Error).name),
    );

  it("a 307 with a body to a denied host is refused before the body is sent", async () => {
    expect(
      await code(checkedFetch(c(), `${allowed.origin}/307-to-denied`, { method: "POST", body: "secret" })),
    ).toBe("PERMISSION_DENIED");
    expect(denied.requests).toEqual([]);
  });

  it("a 308 on the same origin re-sends method and body", async () => {
    const { response } = await checkedFetch(c(), `${allowed.origin}/308-self`, {
      method: "PUT",
      body: "data",
      headers: { authorization: "Bearer t" },
    });
    expect(await response.text()).toBe("PUT data Bearer t");
  });

  it("redirects to userinfo URLs, other schemes and endless loops are refused", async () => {
    expect(await code(checkedFetch(c(), `${allowed.origin}/userinfo`))).toBe("PERMISSION_DENIED");
    expect(await code(checkedFetch(c(), `${allowed.origin}/scheme`))).toBe("PERMISSION_DENIED");
    expect(await code(checkedFetch(c(), `${allowed.origin}/loop`, {}, { maxRedirects: 3 }))).toBe(
      "PERMISSION_TOO_MANY_REDIRECTS",
    );
    expect(allowed.requests.filter((r) => r.url === "/loop")).toHaveLength(4);
  });

  it("a non-finite or negative maxRedirects is rejected instead of following a loop forever", async () => {
    for (const maxRedirects of [Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY]) {
      const before = allowed.requests.length;
      const outcome = await code(checkedFetch(c(), `${allowed.origin}/loop`, {}, { maxRedirects }));
      expect(outcome, String(maxRedirects)).toBe("RangeError");
      expect(allowed.requests.length).toBe(before);
    }
  });
});
