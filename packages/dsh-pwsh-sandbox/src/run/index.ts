export { type PwshCapabilities, pwshCapabilities } from "./pwsh-capabilities.js";
export {
  type ConfinedPwshResult,
  PWSH_SWITCHES,
  type RunConfinedPwshOptions,
  runConfinedPwsh,
} from "./run-confined-pwsh.js";
