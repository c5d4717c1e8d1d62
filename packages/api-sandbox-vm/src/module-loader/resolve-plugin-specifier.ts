import { realpath } from "node:fs/promises";
import { dirname, extname, isAbsolute, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { SAND_VM_CODES, VmSandboxError } from "../errors/sand-vm-codes.js";

const LOADABLE_EXTENSIONS = new Set([".mjs", ".js"]);

function forbidden(specifier: string, why: string): VmSandboxError {
  return new VmSandboxError(
    SAND_VM_CODES.MODULE_IMPORT_FORBIDDEN,
    `import ${JSON.stringify(specifier)} is forbidden: ${why}. Plugins may only import their own files with relative specifiers ("./x.mjs")`,
    { details: { specifier } },
  );
}

/** True when `child` is `root` or inside it (both canonical). */
export function isInside(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Resolve an import `specifier` written in the module at `referrerPath` to the real path of a
 * file inside `root`, or throw `SAND_VM_MODULE_IMPORT_FORBIDDEN`. Only relative specifiers
 * (`./`, `../`) are accepted; bare names, `node:` built-ins, absolute paths and URLs (`file:`,
 * `data:`, `http:`) are refused, as are query strings and fragments. The target is resolved with
 * `realpath`, so a symlink inside the plugin folder that points outside it is refused too.
 * Only `.mjs` and `.js` files load; `.js` files are treated as ES modules.
 */
export async function resolvePluginSpecifier(
  specifier: string,
  referrerPath: string,
  root: string,
): Promise<string> {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) {
    if (specifier.startsWith("node:"))
      throw forbidden(specifier, "Node.js built-ins are not available in the sandbox");
    if (/^[a-z][a-z0-9+.-]*:/iu.test(specifier)) throw forbidden(specifier, "URL specifiers are not allowed");
    if (specifier.startsWith("/")) throw forbidden(specifier, "absolute paths are not allowed");
    throw forbidden(specifier, "bare package specifiers are not allowed");
  }
  let url: URL;
  try {
    url = new URL(specifier, pathToFileURL(referrerPath));
  } catch {
    throw forbidden(specifier, "it is not a valid relative URL");
  }
  if (url.search !== "" || url.hash !== "")
    throw forbidden(specifier, "query strings and fragments are not allowed");
  const lexical = fileURLToPath(url);
  if (!isInside(root, lexical)) throw forbidden(specifier, "it points outside the plugin's folder");
  let real: string;
  try {
    real = await realpath(lexical);
  } catch {
    throw new VmSandboxError(
      SAND_VM_CODES.MODULE_LOAD_FAILED,
      `import ${JSON.stringify(specifier)} could not be loaded: the file does not exist`,
      { details: { specifier } },
    );
  }
  if (!isInside(root, real))
    throw forbidden(specifier, "it resolves (through a symlink) outside the plugin's folder");
  if (!LOADABLE_EXTENSIONS.has(extname(real)))
    throw forbidden(specifier, "only .mjs and .js modules can be imported");
  return real;
}

/** The canonical plugin root: `realpath` of the directory holding `pluginModulePath`. */
export async function pluginRoot(pluginModulePath: string): Promise<string> {
  return realpath(dirname(pluginModulePath));
}
