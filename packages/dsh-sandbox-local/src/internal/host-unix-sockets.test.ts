import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostUnixSocketPaths, unixSocketMasks } from "./host-unix-sockets.js";

const TABLE = [
  "Num       RefCount Protocol Flags    Type St Inode Path",
  "0000000000000000: 00000002 00000000 00010000 0001 01 3423253 /run/docker.sock",
  "0000000000000000: 00000002 00000000 00010000 0001 01 3423254 /run/user/0/my agent.sock",
  "0000000000000000: 00000002 00000000 00010000 0001 01 3423255 @/tmp/.X11-unix/X0",
  "0000000000000000: 00000003 00000000 00000000 0001 03 3423256",
  "0000000000000000: 00000002 00000000 00000000 0002 01 3423257 /dev/log",
  "0000000000000000: 00000002 00000000 00000000 0002 01 3423258 /proc/fake.sock",
  "0000000000000000: 00000002 00000000 00010000 0001 01 3423259 /run/docker.sock",
  "0000000000000000: 00000002 00000000 00010000 0001 01 3423260 /gone/elsewhere.sock",
  "",
].join("\n");

describe("hostUnixSocketPaths", () => {
  it("keeps absolute socket paths (spaces included) that exist here, once each, outside /dev and /proc", () => {
    const present = new Set(["/run/docker.sock", "/run/user/0/my agent.sock", "/dev/log", "/proc/fake.sock"]);
    const paths = hostUnixSocketPaths({ readTable: () => TABLE, isSocket: (path) => present.has(path) });
    expect(paths).toEqual(["/run/docker.sock", "/run/user/0/my agent.sock"]);
  });

  it("returns nothing when /proc/net/unix cannot be read", () => {
    expect(hostUnixSocketPaths({ readTable: () => undefined, isSocket: () => true })).toEqual([]);
  });

  describe("on this host", () => {
    let dir: string;
    let server: Server;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "suaveplan-unix-sockets-"));
      writeFileSync(join(dir, "not-a-socket"), "");
      server = createServer();
      await new Promise<void>((resolve) => server.listen(join(dir, "listening.sock"), resolve));
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    });

    it("finds a socket a server is listening on, and not a plain file", () => {
      const ours = hostUnixSocketPaths().filter((path) => path.startsWith(dir));
      expect(ours).toEqual([join(dir, "listening.sock")]);
    });
  });
});

describe("unixSocketMasks", () => {
  it("puts a read-only /dev/null over each socket", () => {
    expect(unixSocketMasks(["/run/a.sock", "/run/b c.sock"])).toEqual([
      "--ro-bind",
      "/dev/null",
      "/run/a.sock",
      "--ro-bind",
      "/dev/null",
      "/run/b c.sock",
    ]);
  });
});
