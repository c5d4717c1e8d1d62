// Network allow-list by domain: the provider's filtering proxy, reached from
// real bwrap / Landlock sandboxes, with real HTTP servers on 127.0.0.1 and the
// proxy's resolver pointed at them (no other network is touched).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { type AddressInfo, createServer as createNetServer, type LookupFunction } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { classifyConfinedRun } from "@suaveplan/dsh-sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalBackendName } from "../src/backend/index.js";
import { checkAllowList, hostAllowed, LocalSandboxProvider } from "../src/index.js";
import { runConfined } from "./support/run-confined.js";

const hasCurl = readdirSync("/usr/bin").includes("curl");
const BACKENDS: readonly LocalBackendName[] = ["bwrap", "landlock+bwrap", "landlock"];
const usable = (name: LocalBackendName): boolean =>
  new LocalSandboxProvider({ backends: [name], network: { allow: ["x.test"] } }).probe()[0]
    ?.domainAllowList !== undefined;

/** Every *.test name resolves to 127.0.0.1, where the test's own servers listen. */
const testLookup: LookupFunction = (hostname, options, callback) => {
  if (!hostname.endsWith(".test")) {
    (callback as (e: Error) => void)(new Error(`test resolver knows only *.test, not ${hostname}`));
    return;
  }
  if (typeof options === "object" && options.all === true) {
    (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [
      { address: "127.0.0.1", family: 4 },
    ]);
  } else (callback as (e: null, a: string, f: number) => void)(null, "127.0.0.1", 4);
};

let server: Server;
let port: number;
const seen: string[] = [];
let dir: string;
let workspace: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.headers.host} ${req.url}`);
    res.end("hello from upstream\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  dir = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-allow-list-")));
  workspace = join(dir, "ws");
  mkdirSync(workspace);
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe("allow-list entries", () => {
  it("accept host names and *. wildcards, and refuse schemes, ports, paths and bare *", () => {
    expect(checkAllowList(["API.example.com", "*.example.org", "10.0.0.1"])).toEqual({
      ok: ["api.example.com", "*.example.org", "10.0.0.1"],
    });
    expect(
      ["https://a.com", "a.com:443", "a.com/x", "*", "*.*.a.com", ""].map((entry) => {
        const checked = checkAllowList([entry]);
        return "ok" in checked ? "ok" : checked.index;
      }),
    ).toEqual([0, 0, 0, 0, 0, 0]);
    expect(
      [
        ["a.example.org", "*.example.org"],
        ["a.b.example.org", "*.example.org"],
        ["example.org", "*.example.org"],
        ["evil-example.org", "*.example.org"],
        ["API.EXAMPLE.COM.", "api.example.com"],
      ].map(([host, entry]) => hostAllowed(host as string, [entry as string])),
    ).toEqual([true, true, false, false, true]);
  });

  it("a bad entry is SANDBOX_INVALID_OPTIONS naming network.allow[i]", () => {
    expect(() => new LocalSandboxProvider({ network: { allow: ["ok.test", "https://bad.test"] } })).toThrow(
      /network\.allow\[1\] must be a host name/,
    );
  });
});

for (const name of BACKENDS) {
  describe.skipIf(!usable(name) || !hasCurl)(`${name}: network allow-list`, () => {
    let provider: LocalSandboxProvider;
    beforeAll(() => {
      provider = new LocalSandboxProvider({
        backends: [name],
        network: { allow: ["allowed.test", "*.wild.test"] },
        proxyLookup: testLookup,
      });
    });
    afterAll(() => provider.dispose());
    const policy = () => ({ mode: "read-only", workspaceRoot: workspace }) as const;

    it("lets allowed hosts through the proxy, by plain HTTP and by CONNECT, and sets NODE_USE_ENV_PROXY for Node", async () => {
      seen.length = 0;
      const run = await runConfined(
        provider,
        `curl -sS --max-time 10 http://allowed.test:${port}/plain && curl -sS --max-time 10 --proxytunnel http://api.wild.test:${port}/tunnel && printenv NODE_USE_ENV_PROXY`,
        policy(),
      );
      expect({ exitCode: run.exitCode, stdout: run.stdout, network: run.confined.network }).toEqual({
        exitCode: 0,
        stdout: "hello from upstream\nhello from upstream\n1\n",
        network: "allow-list",
      });
      expect(seen).toEqual([`allowed.test:${port} /plain`, `api.wild.test:${port} /tunnel`]);
    });

    it("refuses other hosts, reports the denial, and classifyConfinedRun calls it denied", async () => {
      seen.length = 0;
      const run = await runConfined(
        provider,
        `curl -sS --max-time 10 --proxytunnel http://evil.test:${port}/steal`,
        policy(),
      );
      expect({
        exitCode: run.exitCode,
        classification: classifyConfinedRun(run, run.confined),
        seen,
        denial: provider.networkDenials().at(-1),
      }).toEqual({
        exitCode: 56,
        classification: { outcome: "denied", detail: "curl: (56) CONNECT tunnel failed, response 403" },
        seen: [],
        denial: { host: "evil.test", port },
      });
      const plain = await runConfined(
        provider,
        `curl -sS --max-time 10 http://evil.test:${port}/x`,
        policy(),
      );
      expect(plain.stdout).toBe(`suaveplan-sandbox: network allow-list denied evil.test:${port}\n`);
    });

    it("a direct connection that bypasses the proxy reaches nothing", async () => {
      seen.length = 0;
      const run = await runConfined(
        provider,
        `curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:${port}/direct; echo "exit $?"`,
        policy(),
      );
      expect({ failed: !run.stdout.includes("exit 0"), seen }).toEqual({ failed: true, seen: [] });
    });

    it("host UNIX sockets stay cut unless allowed explicitly", async () => {
      const socketPath = join(dir, `${name.replace("+", "-")}.sock`);
      const unixServer = createNetServer((socket) => socket.end("host service\n"));
      await new Promise<void>((resolve) => unixServer.listen(socketPath, resolve));
      const connect = `${JSON.stringify(process.execPath)} -e 'const s = require("net").connect(${JSON.stringify(socketPath)}); s.on("data", (d) => { process.stdout.write(d); process.exit(0); }); s.on("error", (e) => { console.log(e.code); process.exit(0); })'`;
      try {
        const cut = await runConfined(provider, connect, policy());
        expect(cut.stdout).not.toBe("host service\n");
        if (name !== "landlock") {
          const open = new LocalSandboxProvider({
            backends: [name],
            network: { allow: ["allowed.test"] },
            allowUnixSockets: [socketPath],
          });
          const reached = await runConfined(open, connect, policy());
          open.dispose();
          expect(reached.stdout).toBe("host service\n");
        } else {
          const refused = new LocalSandboxProvider({
            backends: [name],
            network: { allow: ["allowed.test"] },
            allowUnixSockets: [socketPath],
          });
          expect(() => refused.selectedBackend()).toThrow(/cannot keep chosen UNIX sockets reachable/);
          refused.dispose();
        }
      } finally {
        await new Promise<void>((resolve) => unixServer.close(() => resolve()));
      }
    });
  });
}

describe.skipIf(!usable("bwrap"))("the proxy's lifetime", () => {
  it("starts at the first confine, and dispose() closes it and removes its socket (idempotent)", () => {
    const provider = new LocalSandboxProvider({ backends: ["bwrap"], network: { allow: ["allowed.test"] } });
    const argv = provider.confine(["true"], { mode: "read-only", workspaceRoot: workspace }).argv;
    const bridge = argv[argv.indexOf("--bridge") + 1] ?? "";
    const socketPath = bridge.slice(bridge.indexOf(":") + 1);
    expect(existsSync(socketPath)).toBe(true);
    provider.dispose();
    provider.dispose();
    expect(existsSync(socketPath)).toBe(false);
  });
});

describe("probe: allow-list enforcement per backend", () => {
  it("is full where the command's only network is the proxy, partial under plain Landlock", () => {
    const rows = new LocalSandboxProvider({ backends: [...BACKENDS] })
      .probe()
      .filter((p) => p.available)
      .map((p) => [p.backend, p.domainAllowList]);
    const expected: Record<string, string> = { bwrap: "full", "landlock+bwrap": "full", landlock: "partial" };
    expect(Object.fromEntries(rows)).toEqual(
      Object.fromEntries(rows.map(([backend]) => [backend, expected[backend as string]])),
    );
  });
});
