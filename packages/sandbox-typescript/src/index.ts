// Type stripping

export { contextDeclarations } from "./context-declarations.js";
export { type StrippedTypes, stripModuleTypes, stripTypes } from "./strip-types.js";
// Typecheck
export {
  createTypechecker,
  TYPECHECK_MEMORY_LIMIT_BYTES,
  TYPECHECK_TIMEOUT_MS,
  type Typechecker,
  type TypecheckerOptions,
  type TypecheckOutcome,
  type TypecheckRequest,
} from "./typechecker.js";
