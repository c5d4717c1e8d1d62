import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { redisMissing, until } from "./failures-harness.js";

const OWNER = fileURLToPath(new URL("./fixtures/redis-owner.mjs", import.meta.url));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Start the owner process; resolves the server it started once it printed it. */
async function owner(mode: "exit" | "wait") {
  const child = spawn(process.execPath, [OWNER, mode], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  let output = "";
  child.stdout.on("data", (d: Buffer) => {
    output += d.toString();
  });
  await until(() => output.includes("\n"), "the owner to start its redis-server");
  return { child, exited, server: JSON.parse(output) as { pid: number; dir: string } };
}

describe.skipIf(redisMissing)("the testing redis-server does not outlive the process that started it", () => {
  it("process.exit() without stop(): the server is gone and its temp dir removed", async () => {
    const { exited, server } = await owner("exit");
    await exited;
    await until(() => !alive(server.pid), "the server to end", 5000);
    expect({ alive: alive(server.pid), dir: existsSync(server.dir) }).toEqual({ alive: false, dir: false });
  });

  it.runIf(process.platform === "linux")("kill -9 of that process: the server gets SIGKILL too", async () => {
    const { child, server } = await owner("wait");
    expect(alive(server.pid)).toBe(true);
    child.kill("SIGKILL");
    await until(() => !alive(server.pid), "the server to end", 5000);
    expect(alive(server.pid)).toBe(false);
  });
});
