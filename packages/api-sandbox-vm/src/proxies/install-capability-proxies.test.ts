import { PermissionChecker } from "@suaveplan/api-sandbox-permissions";
import { describe, expect, it } from "vitest";
import { createNodeFsAdapter, type FsHostAdapter } from "./fs-proxy/fs-proxy.js";
import { installCapabilityProxies, toCrossingError } from "./install-capability-proxies.js";

describe("installCapabilityProxies", () => {
  const checker = new PermissionChecker({ fs: [{ path: "/**", access: "read" }] });

  it("installs what is configured", () => {
    expect(installCapabilityProxies({ checker }).installed).toEqual(["fs", "fetch"]);
    expect(installCapabilityProxies({ checker, proxies: { fetch: false } }).installed).toEqual(["fs"]);
    expect(installCapabilityProxies({ checker, proxies: { fs: false, fetch: false } }).installed).toEqual([]);
  });

  it("dispose aborts in-flight adapter calls and rejects them with SAND_VM_DISPOSED", async () => {
    const signals: AbortSignal[] = [];
    const hanging: FsHostAdapter = {
      ...createNodeFsAdapter(),
      read(_path, signal) {
        signals.push(signal);
        return new Promise(() => {});
      },
    };
    const proxies = installCapabilityProxies({ checker, proxies: { fs: hanging } });
    const pending = proxies.call("fs.read", ["/etc/hostname"]);
    while (signals.length === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(proxies.inFlight).toBe(1);
    proxies.dispose();
    proxies.dispose();
    await expect(pending).rejects.toMatchObject({ code: "SAND_VM_DISPOSED" });
    expect({ aborted: signals.map((s) => s.aborted), inFlight: proxies.inFlight }).toEqual({
      aborted: [true],
      inFlight: 0,
    });
    await expect(proxies.call("fs.read", ["/etc/hostname"])).rejects.toMatchObject({
      code: "SAND_VM_DISPOSED",
    });
  });

  it("refuses capabilities that are not installed", async () => {
    const proxies = installCapabilityProxies({ checker, proxies: { fetch: false } });
    await expect(proxies.call("fetch", [{}])).rejects.toMatchObject({ code: "SAND_VM_INVALID_OPTIONS" });
    await expect(proxies.call("fs.unlink", ["/x"])).rejects.toMatchObject({
      code: "SAND_VM_INVALID_OPTIONS",
    });
  });

  it("describes unexpected host errors for the guest without their text", () => {
    expect(toCrossingError(new Error("/secret/host/path exploded"))).toEqual({
      code: "SAND_VM_WORKER_FAILED",
      message: "the capability call failed on the host (SAND_VM_WORKER_FAILED)",
    });
  });
});
