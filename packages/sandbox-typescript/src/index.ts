// Type stripping

export { contextDeclarations } from "./context-declarations.js";
export { type StrippedTypes, stripModuleTypes, stripTypes } from "./strip-types.js";
// Typecheck
export {
  createTypechecker,
  type Typechecker,
  type TypecheckOutcome,
  type TypecheckRequest,
} from "./typechecker.js";
