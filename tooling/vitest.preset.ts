import { defineConfig, type ViteUserConfig } from "vitest/config";

/**
 * Shared vitest preset: node environment, source-first resolution through the
 * `@suaveplan/source` export condition, no console noise, generous timeouts for
 * real child processes and isolates on a 2-core machine.
 */
export function createVitestConfig(overrides: ViteUserConfig["test"] = {}): ViteUserConfig {
  return defineConfig({
    resolve: { conditions: ["@suaveplan/source", "import", "node", "default"] },
    ssr: { resolve: { conditions: ["@suaveplan/source", "import", "node", "default"] } },
    test: {
      environment: "node",
      include: ["src/**/*.test.ts", "test/**/*.test.ts"],
      testTimeout: 30_000,
      hookTimeout: 30_000,
      pool: "forks",
      ...overrides,
    },
  });
}
