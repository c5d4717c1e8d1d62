export { IDENTITY_ENV_KEYS, SENSITIVE_ENV_FRAGMENTS, sanitiseEnv } from "./sanitise-env.js";
