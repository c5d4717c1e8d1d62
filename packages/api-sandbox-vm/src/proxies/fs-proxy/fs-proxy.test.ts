import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
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
