import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LocalSandboxProvider } from "@suaveplan/dsh-sandbox-local";
import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import type { HostCalls, SandboxResult } from "@suaveplan/sandbox-core/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChildConfinement, SpawnEngine } from "../src/index.js";

const weakenedRunner = fileURLToPath(new URL("./fixtures/weakened-runner.mjs", import.meta.url));

function settled(result: SandboxResult): Omit<SandboxResult, "duration" | "memoryUsed" | "usage"> {
  const { duration: _duration, memoryUsed: _memoryUsed, usage: _usage, ...rest } = result;
  return rest;
}

const bwrapUsable = (() => {
  if (process.platform !== "linux") return false;
  const provider = new LocalSandboxProvider({ backends: ["bwrap"], network: "deny" });
  try {
    return provider.selectedBackend().enforcement === "full";
  } catch {
    return false;
  } finally {
    provider.dispose();
  }
})();

/** What the attack reports for each attempt: "allowed", or the error code that stopped it. */
function attack(paths: { canary: string; spawnedCanary: string; secret: string }, port: number): string {
  return `
const fs = require("node:fs"), cp = require("node:child_process"), net = require("node:net");
const attempt = (f) => { try { f(); return "allowed"; } catch (e) { return e.code ?? "exit " + e.status; } };
const tcp = await new Promise((resolve) => {
  const socket = net.connect(${port}, "127.0.0.1");
  socket.on("connect", () => { socket.destroy(); resolve("allowed"); });
  socket.on("error", (e) => resolve(e.code));
});
({
  write: attempt(() => fs.writeFileSync(${JSON.stringify(paths.canary)}, "x")),
  readDenied: attempt(() => fs.readFileSync(${JSON.stringify(paths.secret)}, "utf8")),
  spawnedWrite: attempt(() => cp.execFileSync("/bin/sh", ["-c", "echo x > ${paths.spawnedCanary}"], { stdio: "ignore" })),
  tcp,
  where: { cwd: process.cwd(), pwd: process.env.PWD ?? null },
})`;
}

describe.skipIf(!bwrapUsable)("SpawnEngine with OS confinement (bwrap)", () => {
  let dir: string;
  let server: Server;
  let port: number;
  let weakenedNode: string;
  const providers: LocalSandboxProvider[] = [];
  const engines: SpawnEngine[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "spawn-confinement-"));
    writeFileSync(join(dir, "secret.txt"), "the host's secret");
    // node without the permission model: the weakened child has only the OS confinement around it.
    weakenedNode = join(dir, "weakened-node");
    writeFileSync(
      weakenedNode,
      `#!/bin/sh
for arg do
  shift
  case "$arg" in --experimental-permission|--permission|--allow-fs-read=*) ;; *) set -- "$@" "$arg" ;; esac
done
exec ${JSON.stringify(process.execPath)} "$@"
`,
    );
    chmodSync(weakenedNode, 0o755);
    server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    await Promise.all(engines.map((engine) => engine.destroy()));
    for (const provider of providers) provider.dispose();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  function confined(options: { weakened?: boolean } = {}): SpawnEngine {
    const provider = new LocalSandboxProvider({
      backends: ["bwrap"],
      network: "deny",
      denyRead: [join(dir, "secret.txt")],
    });
    providers.push(provider);
    const engine = new SpawnEngine({
      confinement: provider,
      preStart: false,
      ...(options.weakened === true ? { runnerPath: weakenedRunner, execPath: weakenedNode } : {}),
    });
    engines.push(engine);
    return engine;
  }

  it("is a security boundary, and runs code and tool calls as usual", async () => {
    const engine = confined();
    expect(engine.capabilities.securityBoundary).toBe(true);
    const hostCalls: HostCalls = {
      names: ["add"],
      call: async (_name, input) =>
        (input as { a: number; b: number }).a + (input as { a: number; b: number }).b,
    };
    const result = await engine.execute(
      "const a = await tools.add({ a: 2, b: 3 }); console.log(a); a * 2",
      {},
      { hostCalls },
    );
    expect(settled(result)).toStrictEqual({
      success: true,
      result: 10,
      logs: [{ level: "log", message: "5" }],
    });
  });

  it("stops code that reached process: no write outside, no denied read, spawned processes confined alike, no socket", async () => {
    const paths = {
      canary: join(dir, "canary"),
      spawnedCanary: join(dir, "spawned-canary"),
      secret: join(dir, "secret.txt"),
    };
    // The same attack without the confinement succeeds: the weakened child really has process.
    const open = new SpawnEngine({ runnerPath: weakenedRunner, execPath: weakenedNode, preStart: false });
    engines.push(open);
    expect(open.capabilities.securityBoundary).toBe(false);
    const unconfined = await open.execute(attack(paths, port));
    expect(unconfined.result).toEqual({
      write: "allowed",
      readDenied: "allowed",
      spawnedWrite: "allowed",
      tcp: "allowed",
      where: { cwd: "/", pwd: "/" }, // the fixture's sh exports PWD too
    });
    rmSync(paths.canary);
    rmSync(paths.spawnedCanary);

    const result = await confined({ weakened: true }).execute(attack(paths, port));
    expect({
      result: result.result,
      canary: existsSync(paths.canary),
      spawnedCanary: existsSync(paths.spawnedCanary),
    }).toEqual({
      // Not the host's working directory, neither as the cwd nor as the PWD bwrap sets.
      result: {
        write: "EROFS",
        readDenied: "EACCES",
        spawnedWrite: "exit 2",
        tcp: "EACCES",
        where: { cwd: "/", pwd: "/" },
      },
      canary: false,
      spawnedCanary: false,
    });
  });

  it("starts no child whose confinement keeps the network, and is no boundary without full enforcement", async () => {
    const leaky: ChildConfinement = {
      selectedBackend: () => ({ backend: "stand-in", enforcement: "partial" }),
      confine: (argv) => ({ argv, network: "allow" }),
    };
    const engine = new SpawnEngine({ confinement: leaky, preStart: false });
    engines.push(engine);
    expect(engine.capabilities.securityBoundary).toBe(false);
    expect(settled(await engine.execute("1"))).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.SPAWN_FAILED,
      error: `Could not start the child process ${process.execPath}: the confinement keeps the network (allow); construct the provider with network: "deny". Check execPath and the spawner (SANDBOX_SPAWN_FAILED)`,
      logs: [],
    });
  });
});
