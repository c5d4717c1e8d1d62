export {
  describeZodError,
  parseEngineLimits,
  parseSandboxConfig,
  parseSandboxModule,
  parseSandboxOptions,
  SANDBOX_DEFAULTS,
  type SandboxConfigInput,
  SandboxConfigPartialSchema,
  SandboxModuleSchema,
  SandboxOptionsSchema,
  SandboxPoolConfigSchema,
  withoutUndefined,
} from "./sandbox-schemas.js";
