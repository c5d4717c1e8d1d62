export {
  type JsonValue,
  RENDER_DEFAULTS,
  type RenderedJson,
  type RenderedText,
  type RenderLimits,
  renderJson,
  renderText,
} from "./render-value.js";
export {
  type RunReport,
  type RunReportCall,
  type RunReportInput,
  type RunReportLimits,
  renderRunReport,
} from "./run-report.js";
