export {
  ABSENT_GUEST_GLOBALS,
  describeGuestGlobals,
  GUEST_GLOBALS,
  type GuestGlobal,
} from "./guest-globals.js";
export {
  type GuestScript,
  toGuestScript,
  type WrapShift,
  wrapTopLevelAwait,
  wrapWithShift,
} from "./guest-script.js";
export { type NormalizedModelCode, normalizeModelCode } from "./normalize-model-code.js";
