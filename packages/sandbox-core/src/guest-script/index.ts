export {
  type GuestScript,
  toGuestScript,
  type WrapShift,
  wrapTopLevelAwait,
  wrapWithShift,
} from "./guest-script.js";
