export {
  type JsonValue,
  RENDER_DEFAULTS,
  type RenderedJson,
  type RenderedText,
  type RenderLimits,
  renderJson,
  renderText,
} from "./render-value.js";
