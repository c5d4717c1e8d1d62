export { type GuestScript, toGuestScript } from "./guest-script.js";
