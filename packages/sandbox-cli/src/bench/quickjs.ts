import type { QuickJSSyncVariant, QuickJSWASMModule } from "quickjs-emscripten-core";

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
