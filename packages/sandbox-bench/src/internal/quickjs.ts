import type {
  QuickJSContext,
  QuickJSHandle,
  QuickJSSyncVariant,
  QuickJSWASMModule,
} from "quickjs-emscripten-core";

/**
 * A fresh instance of the QuickJS build the quickjs engine runs (quickjs-ng, the
 * release build with a separate .wasm file), loaded through quickjs-emscripten
 * itself: the base the bench's raw QuickJS primitives make runtimes and
 * contexts on. Loaded only when a row needs it.
 */
export async function loadQuickJs(): Promise<QuickJSWASMModule> {
  const [{ newQuickJSWASMModuleFromVariant }, variantExport] = await Promise.all([
    import("quickjs-emscripten-core"),
    import("@jitl/quickjs-ng-wasmfile-release-sync"),
  ]);
  // The variant's typings are CommonJS: its default export may arrive as `.default`.
  const exported = variantExport.default as unknown as { default?: QuickJSSyncVariant };
  const variant = (exported.default ?? exported) as QuickJSSyncVariant;
  return newQuickJSWASMModuleFromVariant(variant);
}

/**
 * The raw primitive of the QuickJS rows: a fresh runtime and context on `qjs`,
 * `globals` set as strings, `code` evaluated, its value read by `read`, and
 * everything disposed.
 */
export function evalInFreshContext<T>(
  qjs: QuickJSWASMModule,
  code: string,
  read: (ctx: QuickJSContext, value: QuickJSHandle) => T,
  globals: Readonly<Record<string, string>> = {},
): T {
  const rt = qjs.newRuntime();
  try {
    const ctx = rt.newContext();
    try {
      for (const [name, text] of Object.entries(globals)) {
        const handle = ctx.newString(text);
        ctx.setProp(ctx.global, name, handle);
        handle.dispose();
      }
      const value = ctx.unwrapResult(ctx.evalCode(code));
      try {
        return read(ctx, value);
      } finally {
        value.dispose();
      }
    } finally {
      ctx.dispose();
    }
  } finally {
    rt.dispose();
  }
}
