import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { cpuLimitSeconds } from "../src/internal/node-args.js";
import { SELF_DEADLINE_GRACE_MS } from "../src/runner/index.js";

// When the host dies abruptly (SIGKILL, crash) its SIGKILL timeout never
// comes; the runner bounds itself so the orphaned child does not run on.

function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false; // gone (and reaped)
  }
}

const orphans: number[] = [];
afterEach(() => {
  // Never leave a spinning child behind, even when a check failed.
  for (const pid of orphans.splice(0)) {
    if (running(pid)) process.kill(pid, "SIGKILL");
  }
});

async function orphan(code: string, timeout: number): Promise<number> {
  const host = spawn(
    process.execPath,
    [fileURLToPath(new URL("./fixtures/orphaning-host.mjs", import.meta.url)), code, String(timeout)],
    {
      stdio: ["ignore", "pipe", "ignore"],
    },
  );
  const [line] = (await once(host.stdout, "data")) as [Buffer];
  const pid = Number(line.toString().trim());
  orphans.push(pid);
  host.kill("SIGKILL");
  await once(host, "exit");
  return pid;
}

async function gone(pid: number, within: number): Promise<boolean> {
  const deadline = Date.now() + within;
  while (Date.now() < deadline) {
    if (!running(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return !running(pid);
}

describe.skipIf(process.platform !== "linux")("a child whose host died", () => {
  it("ends a top-level endless loop by itself (vm timeout)", async () => {
    const pid = await orphan("console.log('running'); while (true) {}", 300);
    expect(running(pid)).toBe(true); // the host is gone, the child is still looping
    expect(await gone(pid, 5_000)).toBe(true);
  });

  it("ends an endless loop in a timer callback by itself (its CPU-time limit)", async () => {
    // Code re-entered after a timer or a tool reply runs without node's watchdog where the
    // child has a CPU-time limit: that limit is what ends it once nobody will kill it.
    const pid = await orphan("console.log('running'); setTimeout(() => { while (true) {} }, 0)", 300);
    expect(running(pid)).toBe(true);
    expect(await gone(pid, cpuLimitSeconds(300) * 1000 + 10_000)).toBe(true);
  });

  it("ends a never-settling execution by itself (deadline timeout + grace)", async () => {
    const pid = await orphan("console.log('running'); new Promise(() => {})", 300);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(running(pid)).toBe(true); // past the host's timeout: nobody killed it
    expect(await gone(pid, 300 + SELF_DEADLINE_GRACE_MS + 5_000)).toBe(true);
  });
});
