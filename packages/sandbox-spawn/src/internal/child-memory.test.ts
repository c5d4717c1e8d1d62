import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { readResidentBytes, readTreeResidentBytes } from "./child-memory.js";

const MIB = 1024 * 1024;

describe.skipIf(process.platform !== "linux")("readTreeResidentBytes", () => {
  it("counts the processes below a pid, as a confined child's tree (bwrap, launcher, node) needs", async () => {
    // A shell whose own child holds 64 MiB of touched memory: the shell alone is a few hundred KiB.
    const script = `const b = Buffer.alloc(${64 * MIB}, 1); process.stdout.write("ready"); setTimeout(() => b, 60000);`;
    const shell = spawn("/bin/sh", ["-c", `${JSON.stringify(process.execPath)} -e '${script}'; :`], {
      stdio: ["ignore", "pipe", "ignore"],
      detached: true, // its own process group, so the cleanup kills the node below it too
    });
    try {
      await once(shell.stdout, "data");
      const pid = shell.pid as number;
      const own = readResidentBytes(pid) as number;
      const tree = readTreeResidentBytes(pid) as number;
      expect({ shellBelow16MiB: own < 16 * MIB, treeAtLeast64MiB: tree - own >= 64 * MIB }).toEqual({
        shellBelow16MiB: true,
        treeAtLeast64MiB: true,
      });
    } finally {
      process.kill(-(shell.pid as number), "SIGKILL");
      await once(shell, "exit");
    }
  });

  it("is undefined for a pid that does not exist", () => {
    expect(readTreeResidentBytes(2 ** 22 + 1)).toBeUndefined();
  });
});
