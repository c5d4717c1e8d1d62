import { readFile, realpath } from "node:fs/promises";
import { relative, sep } from "node:path";
import { types } from "node:util";
import { type Context, type Module, SourceTextModule } from "node:vm";
import { SAND_VM_CODES, VmSandboxError } from "../errors/sand-vm-codes.js";
import { PLUGIN_URL_PREFIX } from "./plugin-url.js";
import { isInside, pluginRoot, resolvePluginSpecifier } from "./resolve-plugin-specifier.js";

/** What the loader needs from the worker. */
export interface PluginModuleLoaderOptions {
  pluginModulePath: string;
  context: Context;
  timeoutMs: number;
  /** Hand a module's source to the guest (for the eval call-site check). */
  registerSource(identifier: string, source: string): void;
  /** A guest-realm coded error to throw into guest code. */
  guestError(code: string, message: string): unknown;
  /** Schedule a microtask drain of the context. */
  kick(): void;
  /** True for the vm timeout error; must not run plugin code (no traps, no getters). */
  isTimeout(error: unknown): boolean;
}

function ownMessage(error: unknown): string {
  if (typeof error !== "object" || error === null) return String(error);
  if (types.isProxy(error)) return "unknown error";
  const value = Object.getOwnPropertyDescriptor(error, "message")?.value;
  return typeof value === "string" ? value : "unknown error";
}

/**
 * The V8 status of a module, read through `vm.Module`'s own getter: unlike
 * `SourceTextModule#status` it does not report `errored` for a module whose *linking* failed
 * (Node keeps that host-realm error apart), so it tells a failed link from a failed evaluation.
 */
function v8Getter(name: "status" | "error"): (this: Module) => unknown {
  // `SourceTextModule` exists only under --experimental-vm-modules (the worker checks that first).
  const base = Object.getPrototypeOf(SourceTextModule.prototype) as object;
  return Object.getOwnPropertyDescriptor(base, name)?.get as (this: Module) => unknown;
}

/**
 * Loads the plugin's module graph with `vm.SourceTextModule`: the entry, its static imports and
 * any dynamic `import()` — all restricted to relative files under the plugin's real folder
 * (see {@link resolvePluginSpecifier}). Module identifiers and `import.meta.url` are virtual
 * (`sandbox:/plugin/<relative path>`), so no host path reaches plugin code.
 *
 * A dynamic `import()` resolves to the module's namespace computed here, never to a `vm.Module`:
 * handed a module, Node itself would read `module.namespace` / `module.error` and reject the
 * plugin's `import()` with a HOST-realm error (`ERR_VM_MODULE_STATUS` while the module is still
 * linking, the stored linker error once its linking failed), whose `constructor.constructor` is the
 * host's `Function`. Every failure here is replaced by a guest error.
 */
export class PluginModuleLoader {
  readonly #options: PluginModuleLoaderOptions;
  /** One module per real path, shared by concurrent loads (the promise is cached before any await). */
  readonly #modules = new Map<string, Promise<SourceTextModule>>();
  readonly #paths = new WeakMap<Module, string>();
  /** `link()` calls in flight; a module found "linking" is waited for through these. */
  readonly #links = new Set<Promise<void>>();
  /** The one `link()` started for a module (concurrent importers share it). */
  readonly #linking = new WeakMap<Module, Promise<void>>();
  #root = "";

  constructor(options: PluginModuleLoaderOptions) {
    this.#options = options;
  }

  /** Build and link the static graph; returns the (unevaluated) entry module. */
  async load(): Promise<SourceTextModule> {
    const { pluginModulePath } = this.#options;
    let entry: string;
    try {
      this.#root = await pluginRoot(pluginModulePath);
      entry = await realpath(pluginModulePath);
    } catch {
      throw new VmSandboxError(
        SAND_VM_CODES.MODULE_LOAD_FAILED,
        `pluginModulePath ${JSON.stringify(pluginModulePath)} could not be loaded: the file does not exist`,
      );
    }
    if (!isInside(this.#root, entry)) {
      throw new VmSandboxError(
        SAND_VM_CODES.MODULE_IMPORT_FORBIDDEN,
        `pluginModulePath ${JSON.stringify(pluginModulePath)} is a symlink to a file outside its own folder`,
      );
    }
    const module = await this.#moduleFor(entry);
    await this.#link(module);
    return module;
  }

  /** Link `module` once (tracked, so concurrent importers can wait for it). */
  #link(module: SourceTextModule): Promise<void> {
    const started = this.#linking.get(module);
    if (started !== undefined) return started;
    const linking = module.link((specifier, referencing, extra) =>
      this.#resolve(specifier, referencing, extra),
    );
    this.#linking.set(module, linking);
    this.#links.add(linking);
    const forget = () => this.#links.delete(linking);
    linking.then(forget, forget);
    return linking;
  }

  /** Wait until no `link()` is in flight (a module that is "linking" belongs to one of them). */
  async #linksSettled(): Promise<void> {
    while (this.#links.size > 0) await Promise.allSettled([...this.#links]);
  }

  async #resolve(
    specifier: string,
    referencing: Module,
    extra: { attributes?: Readonly<Record<string, string | undefined>> },
  ): Promise<Module> {
    if (extra.attributes !== undefined && Object.keys(extra.attributes).length > 0) {
      throw new VmSandboxError(
        SAND_VM_CODES.MODULE_IMPORT_FORBIDDEN,
        `import ${JSON.stringify(specifier)} is forbidden: import attributes (JSON, CSS modules …) are not supported`,
      );
    }
    const referrer = this.#paths.get(referencing) ?? this.#root;
    return this.#moduleFor(await resolvePluginSpecifier(specifier, referrer, this.#root));
  }

  #moduleFor(realPath: string): Promise<SourceTextModule> {
    let module = this.#modules.get(realPath);
    if (module === undefined) {
      module = this.#createModule(realPath);
      this.#modules.set(realPath, module);
    }
    return module;
  }

  async #createModule(realPath: string): Promise<SourceTextModule> {
    const source = await readFile(realPath, "utf8");
    const identifier =
      PLUGIN_URL_PREFIX + relative(this.#root, realPath).split(sep).map(encodeURIComponent).join("/");
    this.#options.registerSource(identifier, source);
    let module: SourceTextModule;
    try {
      module = new SourceTextModule(source, {
        context: this.#options.context,
        identifier,
        initializeImportMeta: (meta) => {
          meta.url = identifier;
        },
        importModuleDynamically: ((specifier: string, referrer: Module) => {
          const result = this.#dynamicImport(specifier, referrer);
          void result.finally(() => this.#options.kick()).catch(() => {});
          return result;
        }) as never,
      });
    } catch (error) {
      throw new VmSandboxError(
        SAND_VM_CODES.MODULE_LOAD_FAILED,
        `plugin module ${identifier} failed to parse: ${ownMessage(error)}`,
      );
    }
    this.#paths.set(module, realPath);
    return module;
  }

  /**
   * `import()` from plugin code: resolves the module NAMESPACE (a guest object). Failures are
   * thrown as GUEST errors — they land in plugin code — except what the imported module itself
   * threw, which goes back unexamined.
   */
  async #dynamicImport(specifier: string, referrer: Module): Promise<unknown> {
    const fail = (error: unknown): unknown => {
      const code = error instanceof VmSandboxError ? error.code : SAND_VM_CODES.MODULE_LOAD_FAILED;
      return this.#options.guestError(code, ownMessage(error));
    };
    let module: SourceTextModule;
    try {
      const referrerPath = this.#paths.get(referrer) ?? this.#root;
      module = await this.#moduleFor(
        await resolvePluginSpecifier(String(specifier), referrerPath, this.#root),
      );
      await this.#linksSettled();
      if (this.#linking.has(module) || module.status === "unlinked") await this.#link(module);
    } catch (error) {
      throw fail(error);
    }
    const status = Reflect.apply(v8Getter("status"), module, []);
    if (status === "unlinked" || status === "linking") {
      // Its linking failed (now or in an earlier import): Node holds a host-realm error for it.
      let linkError: unknown;
      try {
        linkError = module.error;
      } catch (error) {
        linkError = error;
      }
      throw fail(linkError);
    }
    if (status === "errored") throw Reflect.apply(v8Getter("error"), module, []);
    if (status === "linked") {
      const evaluation = module.evaluate({ timeout: this.#options.timeoutMs });
      this.#options.kick();
      try {
        await evaluation;
      } catch (error) {
        // What the module threw goes back to the plugin unexamined; only the vm timeout is replaced.
        if (this.#options.isTimeout(error)) {
          throw this.#options.guestError(
            SAND_VM_CODES.TIMEOUT,
            "the imported module ran too long without yielding",
          );
        }
        throw error;
      }
    }
    try {
      return module.namespace;
    } catch (error) {
      throw fail(error);
    }
  }
}
