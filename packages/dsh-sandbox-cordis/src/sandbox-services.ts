import {
  type SandboxMode,
  SandboxPolicyService,
  type SandboxPolicyServiceOptions,
  type SandboxProvider,
} from "@suaveplan/dsh-sandbox";
import {
  type LocalBackendName,
  LocalSandboxProvider,
  type LocalSandboxProviderOptions,
} from "@suaveplan/dsh-sandbox-local";
import { type Context, Schema } from "cordis";

declare module "cordis" {
  interface Context {
    /** The process-sandbox seam (seed 002's `ctx.sandbox`): here the local provider. */
    sandbox: SandboxProvider;
    /** The per-call policy service (seed 002's `ctx.sandboxPolicy`). */
    sandboxPolicy: SandboxPolicyService;
  }
}

/** Config of {@link sandboxProviderPlugin}: the operator's options of `LocalSandboxProvider`. */
export interface SandboxProviderConfig {
  /** Ordered backend preference (absent or empty: the platform's). */
  backends?: LocalBackendName[];
  /** `"allow"` (default), `"deny"`, or `{ allow: [hosts] }` through the provider's filtering proxy. */
  network?: "allow" | "deny" | { allow: string[] };
  /** Workspace-relative paths kept read-only under `workspace-write` (absent or empty: the provider's `DEFAULT_PROTECTED_PATHS`). */
  protectedPaths?: string[];
  /** Extra absolute directories writable under `workspace-write`. */
  writableRoots?: string[];
  /** Absolute paths, `~/…` paths and globs the command must not read. */
  denyRead?: string[];
  /** Where each `workspace-write` call gets its private temp area (default `os.tmpdir()`). */
  tempRoot?: string;
}

const BACKENDS: LocalBackendName[] = ["bwrap", "landlock", "landlock+bwrap", "seatbelt", "windows-acl"];
const MODES: SandboxMode[] = ["read-only", "workspace-write", "danger-full-access"];

/** The schema of {@link SandboxProviderConfig} (Cordis validates a plugin's config with it). */
export const SandboxProviderConfigSchema: Schema<SandboxProviderConfig> = Schema.object({
  backends: Schema.array(Schema.union(BACKENDS)).description("Ordered backend preference"),
  network: Schema.union([
    Schema.const("allow" as const),
    Schema.const("deny" as const),
    Schema.object({ allow: Schema.array(String).required() }),
  ]).description('"allow", "deny" or { allow: [hosts] }'),
  protectedPaths: Schema.array(String).description("Workspace-relative paths kept read-only"),
  writableRoots: Schema.array(String).description("Extra writable directories under workspace-write"),
  denyRead: Schema.array(String).description("Paths the command must not read"),
  tempRoot: Schema.string().description("Where private temp areas are created"),
}) as Schema<SandboxProviderConfig>;

/** Config of {@link sandboxPolicyPlugin} as written: the policy service's options, `defaultMode` optional. */
export interface SandboxPolicyConfig {
  /** Deployment default mode (default `"read-only"`). */
  defaultMode?: SandboxMode;
  /** Fallback workspace root for agentless calls and sessions without a cwd (absolute). */
  workspaceRoot: string;
}

/** The schema of {@link SandboxPolicyConfig} (Cordis validates a plugin's config with it and fills the default mode). */
export const SandboxPolicyConfigSchema: Schema<SandboxPolicyConfig, SandboxPolicyServiceOptions> =
  Schema.object({
    defaultMode: Schema.union(MODES).default("read-only").description("Deployment default mode"),
    workspaceRoot: Schema.string().required().description("Fallback workspace root (absolute)"),
  }) as Schema<SandboxPolicyConfig, SandboxPolicyServiceOptions>;

/**
 * Cordis plugin registering `ctx.sandbox`: a `LocalSandboxProvider` built
 * from the plugin's config. Disposing the plugin disposes the provider (its
 * temp areas are removed and later `confine` calls fail closed).
 */
export const sandboxProviderPlugin = {
  name: "suaveplan-sandbox-provider",
  Config: SandboxProviderConfigSchema,
  apply(ctx: Context, config: SandboxProviderConfig): void {
    // The schema fills an absent list with []; an empty list means "the provider's default" here,
    // so a config that omits protectedPaths keeps the default protected paths.
    const given = (list: string[] | undefined): list is string[] => list !== undefined && list.length > 0;
    const options: LocalSandboxProviderOptions = {
      ...(config.backends !== undefined && config.backends.length > 0 ? { backends: config.backends } : {}),
      ...(config.network === undefined ? {} : { network: config.network }),
      ...(given(config.protectedPaths) ? { protectedPaths: config.protectedPaths } : {}),
      ...(given(config.writableRoots) ? { writableRoots: config.writableRoots } : {}),
      ...(given(config.denyRead) ? { denyRead: config.denyRead } : {}),
      ...(config.tempRoot === undefined ? {} : { tempRoot: config.tempRoot }),
    };
    const provider = new LocalSandboxProvider(options);
    ctx.on("dispose", () => provider.dispose());
    ctx.set("sandbox", provider);
  },
};

/**
 * Cordis plugin registering `ctx.sandboxPolicy`: the `SandboxPolicyService`
 * (explicit mode > the session's last `sandbox/mode` event > `defaultMode`;
 * the session's canonical cwd as the workspace root, `workspaceRoot` as the
 * fallback), configured through the plugin's config.
 */
export const sandboxPolicyPlugin = {
  name: "suaveplan-sandbox-policy",
  Config: SandboxPolicyConfigSchema,
  apply(ctx: Context, config: SandboxPolicyServiceOptions): void {
    ctx.set("sandboxPolicy", new SandboxPolicyService(config));
  },
};
