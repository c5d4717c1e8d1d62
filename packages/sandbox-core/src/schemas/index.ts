export {
  describeZodError,
  parseSandboxConfig,
  parseSandboxModule,
  parseSandboxOptions,
  SANDBOX_DEFAULTS,
  type SandboxConfigInput,
  SandboxConfigPartialSchema,
  SandboxModuleSchema,
  SandboxOptionsSchema,
  SandboxPoolConfigSchema,
} from "./sandbox-schemas.js";
