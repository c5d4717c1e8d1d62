// network: "deny" under the landlock and landlock+bwrap backends, against real
// TCP and UDP servers on 127.0.0.1.
import { createSocket, type Socket } from "node:dgram";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LocalBackend } from "../src/backend/index.js";
import { createLandlockBackend, createLayeredBackend } from "../src/landlock/index.js";
import {
  buildLauncherInto,
  createFixture,
  type Fixture,
  policyFor,
  run,
  runConfined,
} from "./landlock-harness.js";

const buildDir = mkdtempSync(join(tmpdir(), "landlock-launcher-"));
let launcherPath = "";
let tcp: Server;
let tcpPort = 0;
let udp: Socket;
let udpPort = 0;
const udpReceived: string[] = [];
const unixSocketPath = join(buildDir, "host-service.sock");
let unixServer: Server;
const unixReceived: string[] = [];

beforeAll(async () => {
  launcherPath = buildLauncherInto(buildDir);
  tcp = createServer((socket) => socket.end("hello\n"));
  await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
  const address = tcp.address();
  tcpPort = typeof address === "object" && address !== null ? address.port : 0;
  udp = createSocket("udp4");
  udp.on("message", (msg) => udpReceived.push(msg.toString()));
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  udpPort = udp.address().port;
  unixServer = createServer((socket) => {
    socket.on("data", (chunk) => unixReceived.push(chunk.toString()));
    socket.end("hello over unix\n");
  });
  await new Promise<void>((resolve) => unixServer.listen(unixSocketPath, resolve));
});
afterAll(async () => {
  await new Promise<void>((resolve) => tcp.close(() => resolve()));
  await new Promise<void>((resolve) => udp.close(() => resolve()));
  await new Promise<void>((resolve) => unixServer.close(() => resolve()));
  rmSync(buildDir, { recursive: true, force: true });
});

const TCP_SCRIPT = 'exec 3<>"/dev/tcp/127.0.0.1/$PORT" && head -n1 <&3';
const NODE_TCP = `require("net").connect(+process.env.PORT, "127.0.0.1").on("data", (d) => { process.stdout.write(d); process.exit(0); }).on("error", (e) => { process.stderr.write(e.code + "\\n"); process.exit(3); })`;
const NODE_UNIX = `const s = require("net").connect(${JSON.stringify(unixSocketPath)}); s.on("connect", () => s.write("from the sandbox")); s.on("data", (d) => { process.stdout.write(d); process.exit(0); }).on("error", (e) => { process.stderr.write(e.code + "\\n"); process.exit(3); })`;
const NODE_UDP = `const s = require("dgram").createSocket("udp4"); s.on("error", (e) => { process.stderr.write(e.code + "\\n"); process.exit(3); }); s.send("udp-from-sandbox", +process.env.PORT, "127.0.0.1", (e) => { if (e) { process.stderr.write(e.code + "\\n"); process.exit(3); } s.close(); });`;

it("unconfined, the TCP server answers (control)", async () => {
  expect.assertions(1);
  const result = await run(["bash", "-c", TCP_SCRIPT], { env: { ...process.env, PORT: String(tcpPort) } });
  expect(result).toMatchObject({ code: 0, stdout: "hello\n" });
});

const modes: { name: string; create: () => LocalBackend }[] = [
  { name: "landlock", create: () => createLandlockBackend({ launcherPath }) },
  { name: "landlock+bwrap", create: () => createLayeredBackend({ launcherPath }) },
];

describe.each(modes)("$name", ({ create }) => {
  let backend: LocalBackend;
  let fx: Fixture;
  beforeAll(() => {
    backend = create();
  });
  beforeEach(() => {
    fx = createFixture();
    udpReceived.length = 0;
  });
  afterEach(() => fx.dispose());

  const confined = (network: "allow" | "deny", program: string[], port: number) => {
    const probe = backend.probe();
    const wrapped = backend.wrap(program, policyFor(fx, { network }), probe);
    return run(wrapped.argv, {
      cwd: fx.workspace,
      env: { ...process.env, ...wrapped.env, PORT: String(port) },
    });
  };

  it("probe reports network deny", () => {
    expect.assertions(1);
    expect(backend.probe().networkDeny).toBe(true);
  });

  it("network allow: a confined bash /dev/tcp connect succeeds", async () => {
    expect.assertions(1);
    const probe = backend.probe();
    const result = await runConfined(backend, probe, policyFor(fx), TCP_SCRIPT, { PORT: String(tcpPort) });
    expect(result).toMatchObject({ code: 0, stdout: "hello\n" });
  });

  it("network deny: a confined bash /dev/tcp connect to 127.0.0.1 fails", async () => {
    expect.assertions(2);
    const result = await confined("deny", ["bash", "-c", TCP_SCRIPT], tcpPort);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
  });

  it("network deny: a confined node TCP connect to 127.0.0.1 fails", async () => {
    expect.assertions(2);
    const result = await confined("deny", [process.execPath, "-e", NODE_TCP], tcpPort);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe("");
  });

  it("network deny: a confined node UDP datagram to 127.0.0.1 never arrives", async () => {
    expect.assertions(2);
    const result = await confined("deny", [process.execPath, "-e", NODE_UDP], udpPort);
    // Give a datagram that slipped out time to land before asserting none did.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(result.code).toBe(3);
    expect(udpReceived).toEqual([]);
  });

  it("network deny: a host file-system UNIX socket (docker.sock-like) is unreachable; allow reaches it (control)", async () => {
    expect.assertions(3);
    const allowed = await confined("allow", [process.execPath, "-e", NODE_UNIX], 0);
    expect(allowed).toMatchObject({ code: 0, stdout: "hello over unix\n" });
    unixReceived.length = 0;
    const denied = await confined("deny", [process.execPath, "-e", NODE_UNIX], 0);
    expect(denied.code).toBe(3);
    expect(unixReceived).toEqual([]);
  });

  it("network allow: a confined node UDP datagram arrives (control)", async () => {
    expect.assertions(2);
    const result = await confined("allow", [process.execPath, "-e", NODE_UDP], udpPort);
    for (let i = 0; i < 50 && udpReceived.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(result.code).toBe(0);
    expect(udpReceived).toEqual(["udp-from-sandbox"]);
  });
});
