import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { killNow } from "./child-control.js";
import { descendantsOf } from "./child-memory.js";

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
});
