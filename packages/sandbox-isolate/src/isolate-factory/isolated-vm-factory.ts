import { createRequire } from "node:module";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { nodeMajorVersion } from "../node-snapshot/node-snapshot.js";
import type {
  HostCallbackFunction,
  IsolateCallback,
  IsolateFactory,
  IsolateHandle,
} from "./isolate-factory.js";
import { ISOLATED_VM_MAJORS, isolatedVmInstallHint } from "./isolated-vm-versions.js";

/** The install hint every "isolated-vm is unusable" message ends with, for the running Node. */
export const ISOLATED_VM_INSTALL_HINT = isolatedVmInstallHint(nodeMajorVersion());

/** Options for {@link createIsolatedVmFactory}. */
export interface IsolatedVmFactoryOptions {
  /**
   * Where to resolve `isolated-vm` from: a file path or `file:` URL inside the
   * project that installed it. Defaults to this package's own location.
   */
  resolveFrom?: string | URL;
}

interface IsolatedVmModule {
  Isolate: new (options: { memoryLimit: number }) => IsolateHandle;
  Callback: new (fn: HostCallbackFunction, options?: { ignored?: true }) => IsolateCallback;
}

/**
 * The default {@link IsolateFactory}: loads the real `isolated-vm` (5.x, 6.x or 7.x) with
 * `createRequire` the first time an isolate is created, so importing this
 * package never fails when the optional peer is absent.
 *
 * `createIsolate` throws a `SandboxError` with `SANDBOX_ENGINE_UNAVAILABLE` when
 * `isolated-vm` is missing, is a major this package does not drive, or its
 * native addon does not load (e.g. built for another Node);
 * the message says what to install.
 */
export function createIsolatedVmFactory(options: IsolatedVmFactoryOptions = {}): IsolateFactory {
  let ivm: IsolatedVmModule | undefined;
  const load = (): IsolatedVmModule => {
    ivm ??= loadIsolatedVm(options.resolveFrom ?? import.meta.url);
    return ivm;
  };
  return {
    createIsolate({ memoryLimit }) {
      return new (load().Isolate)({ memoryLimit });
    },
    createCallback(fn, options) {
      return options === undefined ? new (load().Callback)(fn) : new (load().Callback)(fn, options);
    },
  };
}

/**
 * Load `isolated-vm` resolved from `resolveFrom`, checking its major is one of
 * {@link ISOLATED_VM_MAJORS}.
 * Throws `SANDBOX_ENGINE_UNAVAILABLE` with an install hint otherwise.
 */
export function loadIsolatedVm(resolveFrom: string | URL): IsolatedVmModule {
  const require = createRequire(resolveFrom);
  let version: string;
  try {
    version = (require("isolated-vm/package.json") as { version: string }).version;
  } catch (error) {
    throw new SandboxError(
      SANDBOX_CODES.ENGINE_UNAVAILABLE,
      `IsolateEngine cannot start: the package isolated-vm is not installed. ${ISOLATED_VM_INSTALL_HINT}`,
      { cause: error },
    );
  }
  const major = Number.parseInt(version, 10);
  if (!(ISOLATED_VM_MAJORS as readonly number[]).includes(major)) {
    throw new SandboxError(
      SANDBOX_CODES.ENGINE_UNAVAILABLE,
      `IsolateEngine cannot start: isolated-vm ${version} is installed, and this package drives 5.x, 6.x and 7.x only. ${ISOLATED_VM_INSTALL_HINT}`,
      { details: { version } },
    );
  }
  try {
    const loaded = require("isolated-vm") as Partial<IsolatedVmModule>;
    if (typeof loaded.Isolate !== "function" || typeof loaded.Callback !== "function") {
      throw new TypeError("it exports no Isolate or Callback class");
    }
    return loaded as IsolatedVmModule;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new SandboxError(
      SANDBOX_CODES.ENGINE_UNAVAILABLE,
      `IsolateEngine cannot start: isolated-vm ${version} is installed but did not load (${reason}). Rebuild it for this Node version with \`npm rebuild isolated-vm\`, or reinstall: ${ISOLATED_VM_INSTALL_HINT}`,
      { cause: error, details: { version } },
    );
  }
}
