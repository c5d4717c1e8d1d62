import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../test/support/http-server.js";
import { createTestMetrics } from "../../test/support/metric-reader.js";
import { PermissionError } from "../error-codes/permission-codes.js";
import { PERMISSION_DENIED_METRIC } from "../internal/telemetry.js";
import { PermissionChecker } from "../permission-checker/permission-checker.js";
import { checkedFetch } from "./checked-fetch.js";

let allowed: TestServer;
let forbidden: TestServer;
let metrics: ReturnType<typeof createTestMetrics>;

beforeEach(async () => {
  forbidden = await startTestServer((_req, res) => res.end("forbidden host reached"));
  allowed = await startTestServer((req, res) => {
    const routes: Record<string, () => void> = {
      "/ok": () => res.end("ok"),
      "/to-forbidden": () => res.writeHead(302, { location: `${forbidden.origin}/stolen` }).end(),
      "/to-ok": () => res.writeHead(301, { location: "/ok" }).end(),
      "/see-other": () => res.writeHead(303, { location: "/echo" }).end(),
      "/echo": () => res.end(`${req.method} ${req.body}`),
      "/loop": () => res.writeHead(307, { location: "/loop" }).end(),
    };
    (routes[req.url] ?? (() => res.writeHead(404).end()))();
  });
  metrics = createTestMetrics();
});
afterEach(async () => {
  await Promise.all([allowed.close(), forbidden.close(), metrics.shutdown()]);
});

function checker(): PermissionChecker {
  return new PermissionChecker({ fetch: [allowed.origin] }, { meterProvider: metrics.meterProvider });
}

describe("checkedFetch", () => {
  it("follows an allowed redirect after re-checking it", async () => {
    const result = await checkedFetch(checker(), `${allowed.origin}/to-ok`);
    expect({ url: result.url, redirects: result.redirects, body: await result.response.text() }).toEqual({
      url: `${allowed.origin}/ok`,
      redirects: 1,
      body: "ok",
    });
  });

  it("a redirect to a denied host is refused before that host is contacted", async () => {
    expect.assertions(3);
    try {
      await checkedFetch(checker(), `${allowed.origin}/to-forbidden`);
    } catch (error) {
      expect(error).toBeInstanceOf(PermissionError);
      expect((error as PermissionError).code).toBe("PERMISSION_DENIED");
    }
    expect({
      forbidden: forbidden.requests.length,
      denials: await metrics.read(PERMISSION_DENIED_METRIC, "capability"),
    }).toEqual({ forbidden: 0, denials: { fetch: 1 } });
  });

  it("a denied first URL sends nothing", async () => {
    await expect(checkedFetch(checker(), `${forbidden.origin}/x`)).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
    });
    expect(forbidden.requests).toEqual([]);
  });

  it("303 turns POST into GET without a body", async () => {
    const result = await checkedFetch(checker(), `${allowed.origin}/see-other`, {
      method: "POST",
      body: "payload",
      headers: { "content-type": "text/plain" },
    });
    expect(await result.response.text()).toBe("GET ");
    expect(allowed.requests.map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual([
      "POST /see-other payload",
      "GET /echo ",
    ]);
  });

  it("stops a redirect loop with PERMISSION_TOO_MANY_REDIRECTS", async () => {
    await expect(
      checkedFetch(checker(), `${allowed.origin}/loop`, {}, { maxRedirects: 3 }),
    ).rejects.toMatchObject({
      code: "PERMISSION_TOO_MANY_REDIRECTS",
    });
    expect(allowed.requests).toHaveLength(4);
  });
});
