export {
  QUICKJS_CAPABILITIES,
  QuickJsEngine,
  type QuickJsEngineOptions,
} from "./quickjs-engine/quickjs-engine.js";
