export {
  type CodeToolInput,
  type CodeToolOptions,
  type CodeToolOutput,
  createCodeTool,
} from "./create-code-tool.js";
