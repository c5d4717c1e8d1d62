export { type AnalysisFinding, BUILTIN_RULE_NAMES, type BuiltinRuleName } from "./analyze-program.js";
export {
  CodeTransformer,
  type CodeTransformerOptions,
  DEFAULT_MAX_CODE_LENGTH,
  type RuleFinding,
  type RuleInput,
  type TransformResult,
  type TransformRule,
} from "./code-transformer.js";
export { LruCache, MAX_CACHED_CODE_LENGTH } from "./lru-cache.js";
export {
  type GuestSyntaxError,
  guestCodeParses,
  type ParsedGuestCode,
  parseGuestCode,
} from "./parse-guest-code.js";
export {
  type PreparedGuestCode,
  preparedCodeFor,
  prepareGuestCode,
  withPreparedCode,
} from "./prepare-guest-code.js";
