import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { killNow, treeOf } from "./child-control.js";
import { descendantsOf, readTreeResidentBytes, startTimeOf } from "./child-memory.js";

/** Alive and not a zombie, as /proc tells. */
function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false;
  }
}

describe.skipIf(process.platform !== "linux")("killNow", () => {
  it("kills the processes below the child too, even one in a session of its own (as bwrap's init is)", async () => {
    // The shell's child leaves the shell's session (setsid): a group kill would miss it.
    const shell = spawn("/bin/sh", ["-c", "setsid sleep 60 & echo started; wait"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    await once(shell.stdout, "data");
    let below: number[] = [];
    for (let tries = 0; below.length === 0 && tries < 100; tries++) {
      below = descendantsOf(shell.pid as number);
      if (below.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    killNow(shell);
    await once(shell, "exit");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect({ below: below.length, alive: below.filter(running) }).toEqual({ below: 1, alive: [] });
  });

  it("kills a process once seen below the child after it left the tree, but never a pid that went to another process", async () => {
    // shell → inner shell → sleep; killing the inner shell reparents the sleep to init, out of the tree.
    const shell = spawn(
      "/bin/sh",
      ["-c", "/bin/sh -c '/bin/sleep 60 & wait' & echo started; exec /bin/sleep 60"],
      {
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
    const other = spawn("/bin/sleep", ["60"], { stdio: "ignore" });
    try {
      await once(shell.stdout, "data");
      let below: number[] = [];
      for (let tries = 0; below.length < 2 && tries < 100; tries++) {
        below = descendantsOf(shell.pid as number);
        if (below.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const [inner, sleeper] = below as [number, number];
      readTreeResidentBytes(shell.pid as number, treeOf(shell)); // what the memory sampler does
      // A pid recorded with another start time stands for a process that is gone: not ours to kill.
      treeOf(shell).set(other.pid as number, `${startTimeOf(other.pid as number)}0`);
      process.kill(inner, "SIGKILL");
      for (let tries = 0; descendantsOf(shell.pid as number).includes(sleeper) && tries < 100; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const leftTree = !descendantsOf(shell.pid as number).includes(sleeper);
      killNow(shell);
      await once(shell, "exit");
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect({ leftTree, sleeper: running(sleeper), other: running(other.pid as number) }).toEqual({
        leftTree: true,
        sleeper: false,
        other: true,
      });
    } finally {
      other.kill("SIGKILL");
    }
  });
});
