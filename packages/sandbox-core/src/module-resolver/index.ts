export {
  BLOCKED_MODULES,
  BUILTIN_MODULE_NAMES,
  type BuiltinModuleName,
  ModuleResolver,
  RESERVED_MODULE_NAMES,
} from "./module-resolver.js";
