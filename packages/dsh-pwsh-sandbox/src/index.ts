// The PowerShell consumer (its runtime is dsh-bash-sandbox's runConfinedCommand)
export {
  type ConfinedPwshResult,
  PWSH_SWITCHES,
  type PwshCapabilities,
  pwshCapabilities,
  type RunConfinedPwshOptions,
  runConfinedPwsh,
} from "./run/index.js";
