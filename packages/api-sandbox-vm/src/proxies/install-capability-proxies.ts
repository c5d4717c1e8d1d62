import type { PermissionChecker } from "@suaveplan/api-sandbox-permissions";
import { isSuaveplanError } from "@suaveplan/sandbox-core/error-codes";
import type { CrossingError } from "@suaveplan/sandbox-kernel";
import { SAND_VM_CODES, VmSandboxError } from "../errors/sand-vm-codes.js";
import { type FetchHostAdapter, handleFetchCall } from "./fetch-proxy/fetch-proxy.js";
import {
  createNodeFsAdapter,
  FS_OPERATIONS,
  type FsHostAdapter,
  type FsOperation,
  handleFsCall,
} from "./fs-proxy/fs-proxy.js";

/** Capability globals a plugin can be given. */
export type CapabilityName = "fs" | "fetch";

/** `proxies` option: `true` installs the default adapter, an adapter object installs that, `false` omits the global. */
export interface VmSandboxProxies {
  /** Default `true` (real `node:fs/promises`). */
  fs?: boolean | FsHostAdapter;
  /** Default `true` (global `fetch`). */
  fetch?: boolean | FetchHostAdapter;
}

/** Options of {@link installCapabilityProxies}. */
export interface CapabilityProxyOptions {
  checker: PermissionChecker;
  proxies?: VmSandboxProxies;
}

/** The host end of the capability proxies. */
export interface CapabilityProxies {
  /** Globals the guest bootstrap installs as stubs (`fs`, `fetch`). */
  readonly installed: readonly CapabilityName[];
  /** Proxy calls currently waiting for a host adapter. */
  readonly inFlight: number;
  /**
   * Route one guest call (`"fs.read"`, `"fs.write"`, `"fs.list"`, `"fs.stat"`, `"fetch"`): the
   * checker decides first; only an allowed call reaches the adapter. Rejects with a
   * guest-safe coded error.
   */
  call(op: string, args: readonly unknown[]): Promise<unknown>;
  /** Abort every in-flight adapter call and reject it with `SAND_VM_DISPOSED`; later calls reject too. Idempotent. */
  dispose(): void;
}

/**
 * Build the host end of the `fs` and `fetch` capability proxies for one sandbox. The guest end —
 * stubs that encode each call and send it here — is installed into the context by the bootstrap
 * for every name in `installed`.
 */
export function installCapabilityProxies(options: CapabilityProxyOptions): CapabilityProxies {
  const { checker } = options;
  const fsOption = options.proxies?.fs ?? true;
  const fetchOption = options.proxies?.fetch ?? true;
  const fsAdapter = fsOption === false ? undefined : fsOption === true ? createNodeFsAdapter() : fsOption;
  const fetchAdapter =
    fetchOption === false
      ? undefined
      : fetchOption === true
        ? (input: string, init: RequestInit) => fetch(input, init)
        : fetchOption;
  const installed: CapabilityName[] = [];
  if (fsAdapter !== undefined) installed.push("fs");
  if (fetchAdapter !== undefined) installed.push("fetch");

  const live = new Set<{ controller: AbortController; reject(error: unknown): void }>();
  let disposed = false;
  const disposedError = () =>
    new VmSandboxError(
      SAND_VM_CODES.DISPOSED,
      "the sandbox was disposed while this capability call was in flight",
    );

  const route = (op: string, args: readonly unknown[], signal: AbortSignal): Promise<unknown> => {
    if (op === "fetch" && fetchAdapter !== undefined)
      return handleFetchCall(args, { checker, fetch: fetchAdapter, signal });
    const [family, name] = op.split(".");
    if (
      family === "fs" &&
      fsAdapter !== undefined &&
      name !== undefined &&
      Object.hasOwn(FS_OPERATIONS, name)
    ) {
      return handleFsCall(name as FsOperation, args, { checker, adapter: fsAdapter, signal });
    }
    return Promise.reject(
      new VmSandboxError(SAND_VM_CODES.INVALID_OPTIONS, `capability ${JSON.stringify(op)} is not installed`),
    );
  };

  return {
    installed: Object.freeze(installed),
    get inFlight() {
      return live.size;
    },
    call(op, args) {
      if (disposed) return Promise.reject(disposedError());
      const controller = new AbortController();
      return new Promise((resolve, reject) => {
        const entry = { controller, reject };
        live.add(entry);
        route(op, args, controller.signal).then(
          (value) => {
            live.delete(entry);
            resolve(value);
          },
          (error: unknown) => {
            live.delete(entry);
            reject(error);
          },
        );
      });
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const entry of live) {
        entry.controller.abort(disposedError());
        entry.reject(disposedError());
      }
      live.clear();
    },
  };
}

/** Describe a capability failure for the guest: code and a message that names no host detail. */
export function toCrossingError(error: unknown): CrossingError {
  if (isSuaveplanError(error)) return { code: error.code, message: error.message };
  return {
    code: SAND_VM_CODES.WORKER_FAILED,
    message: `the capability call failed on the host (${SAND_VM_CODES.WORKER_FAILED})`,
  };
}
