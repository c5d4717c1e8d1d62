export {
  type CodeRecord,
  type DefineCodesOptions,
  defineCodes,
  errorDocsPath,
  withErrorCode,
  withoutErrorCode,
} from "./define-codes.js";
export { isSandboxError, SANDBOX_CODES, type SandboxCode, SandboxError } from "./sandbox-codes.js";
export {
  type ErrorDetails,
  isSuaveplanError,
  SuaveplanError,
  type SuaveplanErrorJSON,
  type SuaveplanErrorOptions,
} from "./suaveplan-error.js";
