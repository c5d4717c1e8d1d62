import { spawnSync } from "node:child_process";
import { constants } from "node:fs";
import { mkdir, mkdtemp, open, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PermissionChecker } from "@suaveplan/api-sandbox-permissions";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSdkDenialMetrics } from "../../../test/support/sdk-metrics.js";
import { createVmSandbox } from "../../sandbox/create-vm-sandbox.js";
import { type ConformanceEnv, createConformanceEnv } from "../../testing/conformance-env.js";
import { countingFsAdapter, vmConformanceScenario } from "../../testing/conformance-scenarios.js";
import { createNodeFsAdapter, handleFsCall } from "./fs-proxy.js";

let env: ConformanceEnv | undefined;
afterEach(async () => {
  await env?.cleanup();
  env = undefined;
});

it("allowed read proxies once to host", async () => {
  env = createConformanceEnv(createVmSandbox, createSdkDenialMetrics());
  await vmConformanceScenario("allowed read proxies once to host").run(env);
});

it("denied fs calls never reach the adapter and are counted", async () => {
  env = createConformanceEnv(createVmSandbox, createSdkDenialMetrics());
  await vmConformanceScenario(
    "denied fs calls raise PERMISSION_DENIED inside the sandbox without touching the host adapter",
  ).run(env);
});

describe("handleFsCall", () => {
  let root: string;
  const signal = new AbortController().signal;
  beforeEach(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), "fs-proxy-")));
    await mkdir(join(root, "data/sub"), { recursive: true });
    await writeFile(join(root, "data/a.txt"), "abc");
    await symlink(join(root, "data/a.txt"), join(root, "data/alias.txt"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const checker = () =>
    new PermissionChecker(
      {
        fs: [
          { path: "data/**", access: "read" },
          { path: "data/**", access: "write" },
        ],
      },
      { cwd: root },
    );

  it("reads, writes, lists and stats through the real fs with canonical paths", async () => {
    const counting = countingFsAdapter();
    const context = { checker: checker(), adapter: counting.adapter, signal };
    expect(
      new TextDecoder().decode((await handleFsCall("read", ["data/alias.txt"], context)) as Uint8Array),
    ).toBe("abc");
    await handleFsCall("write", ["data/sub/new.txt", new TextEncoder().encode("new")], context);
    expect(await readFile(join(root, "data/sub/new.txt"), "utf8")).toBe("new");
    expect(await handleFsCall("list", ["data"], context)).toEqual(["a.txt", "alias.txt", "sub"]);
    expect(await handleFsCall("stat", ["data/a.txt"], context)).toEqual({
      type: "file",
      size: 3,
      mtimeMs: expect.any(Number),
    });
    expect(counting.calls).toEqual([
      { op: "read", path: join(root, "data/a.txt") },
      { op: "write", path: join(root, "data/sub/new.txt") },
      { op: "list", path: join(root, "data") },
      { op: "stat", path: join(root, "data/a.txt") },
    ]);
  });

  it("reports adapter failures by errno only, never the host path", async () => {
    const context = { checker: checker(), adapter: createNodeFsAdapter(), signal };
    await expect(handleFsCall("read", ["data/missing.txt"], context)).rejects.toMatchObject({
      code: "SAND_VM_FS_FAILED",
      message:
        'fs.read of "data/missing.txt" failed: ENOENT (SAND_VM_FS_FAILED); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_FS_FAILED.md',
    });
    await expect(handleFsCall("read", ["data/sub"], context)).rejects.toMatchObject({
      code: "SAND_VM_FS_FAILED",
      details: { operation: "read", errno: "EISDIR" },
    });
  });

  it("denies with a message quoting only the plugin's own path", async () => {
    const counting = countingFsAdapter();
    await expect(
      handleFsCall("read", ["data/../../etc/passwd"], {
        checker: checker(),
        adapter: counting.adapter,
        signal,
      }),
    ).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      message:
        'fs.read of "data/../../etc/passwd" was denied by the sandbox policy (no-matching-rule) (PERMISSION_DENIED); see @suaveplan/api-sandbox-permissions/docs/errors/PERMISSION_DENIED.md',
    });
    expect(counting.calls).toEqual([]);
  });

  it("the default adapter refuses to follow a symlink swapped in after the check (O_NOFOLLOW)", async () => {
    await expect(createNodeFsAdapter().read(join(root, "data/alias.txt"), signal)).rejects.toMatchObject({
      code: "ELOOP",
    });
  });
});

describe("a FIFO in an allowed path", () => {
  // A blocking open (or read) of a FIFO holds one of libuv's four threads until a writer comes; no
  // timeout or abort frees it, and the host's own file reads queue behind those threads.
  let dir: string;
  let fifo: string;
  afterEach(async () => {
    // Release whatever an open still waits for (only a blocking adapter leaves one): a writer for
    // the readers, a reader for the writers.
    for (const flags of [constants.O_WRONLY, constants.O_RDONLY]) {
      await open(fifo, flags | constants.O_NONBLOCK).then(
        (handle) => handle.close(),
        () => undefined,
      );
    }
  });

  it("is refused at once with SAND_VM_FS_FAILED, and the host's own file reads go on", async () => {
    env = createConformanceEnv(createVmSandbox);
    ({ dir } = await env.plugin({
      "plugin.mjs": `const attempt = (fn) => fn().then(() => "done", (e) => ({ name: e.name, code: e.code, message: e.message }));
        export const probe = async (path) => [
          ...(await Promise.all(Array.from({ length: 6 }, () => attempt(() => fs.read(path))))),
          await attempt(() => fs.write(path, "x")),
        ];`,
      "data/host.txt": "the host's own file",
    }));
    fifo = join(dir, "data/pipe");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const sandbox = await env.sandbox({
      pluginModulePath: join(dir, "plugin.mjs"),
      policy: {
        fs: [
          { path: "data/**", access: "read" },
          { path: "data/**", access: "write" },
        ],
      },
      proxies: { fetch: false },
      timeoutMs: 3000,
    });
    const guest = await sandbox.call("probe", "data/pipe").catch((error: { code?: unknown }) => error.code);
    // Read after the plugin's calls: with every libuv thread stuck in a FIFO this never ends.
    const host = await Promise.race([
      readFile(join(dir, "data/host.txt"), "utf8"),
      new Promise((resolve) => setTimeout(resolve, 5000, "the host's read still waits after 5 s")).then(
        (value) => value,
      ),
    ]);
    const refused = {
      name: "SuaveplanError",
      code: "SAND_VM_FS_FAILED",
      message:
        'fs.read of "data/pipe" failed: not a regular file (a fifo); only regular files can be read or written (SAND_VM_FS_FAILED); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_FS_FAILED.md (SAND_VM_FS_FAILED)',
    };
    expect({ guest, host }).toEqual({
      guest: [
        ...Array.from({ length: 6 }, () => refused),
        // No reader: a non-blocking open for writing fails before the check can look.
        {
          ...refused,
          message:
            'fs.write of "data/pipe" failed: ENXIO (SAND_VM_FS_FAILED); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_FS_FAILED.md (SAND_VM_FS_FAILED)',
        },
      ],
      host: "the host's own file",
    });
  });
});
