import { PermissionChecker } from "@suaveplan/api-sandbox-permissions";
import { afterEach, describe, expect, it } from "vitest";
import { createSdkDenialMetrics } from "../../../test/support/sdk-metrics.js";
import { createVmSandbox } from "../../sandbox/create-vm-sandbox.js";
import { type ConformanceEnv, createConformanceEnv } from "../../testing/conformance-env.js";
import { vmConformanceScenario } from "../../testing/conformance-scenarios.js";
import { handleFetchCall } from "./fetch-proxy.js";

let env: ConformanceEnv | undefined;
afterEach(async () => {
  await env?.cleanup();
  env = undefined;
});

it("denied fetch never contacts host AND increments denial metric", async () => {
  env = createConformanceEnv(createVmSandbox, createSdkDenialMetrics());
  await vmConformanceScenario("denied fetch never contacts host AND increments denial metric").run(env);
});

it("allowed fetch answers and redirects to ungranted hosts are refused per hop", async () => {
  env = createConformanceEnv(createVmSandbox, createSdkDenialMetrics());
  await vmConformanceScenario(
    "allowed fetch returns the response; redirects and userinfo tricks to other hosts are refused",
  ).run(env);
});

describe("handleFetchCall", () => {
  const signal = new AbortController().signal;

  it("returns status, headers, final URL and the body bytes", async () => {
    env = createConformanceEnv(createVmSandbox);
    const server = await env.server((request, response) => {
      if (request.url === "/moved") response.writeHead(301, { location: "/final" }).end();
      else response.writeHead(200, { "x-seen": request.url ?? "" }).end("body");
    });
    const checker = new PermissionChecker({ fetch: [server.origin] });
    const answer = await handleFetchCall([{ url: `${server.origin}/moved`, method: "GET", headers: [] }], {
      checker,
      fetch,
      signal,
    });
    expect({
      ...answer,
      body: new TextDecoder().decode(answer.body),
      headers: answer.headers.filter(([k]) => k === "x-seen"),
    }).toEqual({
      status: 200,
      statusText: "OK",
      url: `${server.origin}/final`,
      redirected: true,
      headers: [["x-seen", "/final"]],
      body: "body",
    });
  });

  it("maps network failures to SAND_VM_FETCH_FAILED with the cause code only", async () => {
    env = createConformanceEnv(createVmSandbox);
    const server = await env.server();
    const origin = server.origin;
    await env.cleanup(); // the port is closed now
    const checker = new PermissionChecker({ fetch: [origin] });
    await expect(
      handleFetchCall([{ url: `${origin}/`, method: "GET", headers: [] }], { checker, fetch, signal }),
    ).rejects.toMatchObject({
      code: "SAND_VM_FETCH_FAILED",
      message: `fetch of "${origin}/" failed: ECONNREFUSED (SAND_VM_FETCH_FAILED); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_FETCH_FAILED.md`,
    });
  });

  it("rejects malformed requests without calling fetch", async () => {
    let called = 0;
    const checker = new PermissionChecker({ fetch: ["*.example.com"] });
    const countingFetch = async () => {
      called++;
      return new Response("");
    };
    await expect(
      handleFetchCall([{ url: 42 }], { checker, fetch: countingFetch, signal }),
    ).rejects.toMatchObject({ code: "SAND_VM_FETCH_FAILED" });
    expect(called).toBe(0);
  });
});
