import { readFile, realpath } from "node:fs/promises";
import { relative, sep } from "node:path";
import { types } from "node:util";
import { type Context, type Module, SourceTextModule } from "node:vm";
import { SAND_VM_CODES, VmSandboxError } from "../errors/sand-vm-codes.js";
import { PLUGIN_URL_PREFIX } from "../frozen-globals/bootstrap-source.js";
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
 * Loads the plugin's module graph with `vm.SourceTextModule`: the entry, its static imports and
 * any dynamic `import()` — all restricted to relative files under the plugin's real folder
 * (see {@link resolvePluginSpecifier}). Module identifiers and `import.meta.url` are virtual
 * (`sandbox:/plugin/<relative path>`), so no host path reaches plugin code.
 */
export class PluginModuleLoader {
  readonly #options: PluginModuleLoaderOptions;
  readonly #modules = new Map<string, SourceTextModule>();
  readonly #paths = new WeakMap<Module, string>();
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
    await module.link((specifier, referencing, extra) => this.#link(specifier, referencing, extra));
    return module;
  }

  async #link(
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

  async #moduleFor(realPath: string): Promise<SourceTextModule> {
    const cached = this.#modules.get(realPath);
    if (cached !== undefined) return cached;
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
    this.#modules.set(realPath, module);
    this.#paths.set(module, realPath);
    return module;
  }

  /** `import()` from plugin code. Failures are thrown as GUEST errors: they land in plugin code. */
  async #dynamicImport(specifier: string, referrer: Module): Promise<Module> {
    let module: SourceTextModule;
    try {
      const referrerPath = this.#paths.get(referrer) ?? this.#root;
      module = await this.#moduleFor(
        await resolvePluginSpecifier(String(specifier), referrerPath, this.#root),
      );
      if (module.status === "unlinked") {
        await module.link((s, r, extra) => this.#link(s, r, extra));
      }
    } catch (error) {
      const code = error instanceof VmSandboxError ? error.code : SAND_VM_CODES.MODULE_LOAD_FAILED;
      throw this.#options.guestError(code, ownMessage(error));
    }
    if (module.status === "linked") {
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
    return module;
  }
}
