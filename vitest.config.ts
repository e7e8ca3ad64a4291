import { configDefaults, defineConfig } from "vitest/config";

/**
 * Workspace packages export their TypeScript sources under @humanpass/source, and dist/ to everyone else. Vitest
 * also passes these conditions to its worker processes as `--conditions`, so no `module`: Node would then load
 * packages' bundler-only ESM builds (@opentelemetry/api's has extensionless imports).
 */
export const CONDITIONS = ["@humanpass/source", "node", "development|production"];

export default defineConfig({
  resolve: { conditions: CONDITIONS },
  ssr: { resolve: { conditions: CONDITIONS } },
  test: {
    include: [
      "libs/*/src/**/*.test.ts",
      "libs/*/test/**/*.test.ts",
      "services/*/src/**/*.test.ts",
      "services/*/test/**/*.test.ts",
      "tools/*/src/**/*.test.ts",
      "tools/*/test/**/*.test.ts",
      "deploy/validate/**/*.test.ts",
    ],
    // The compose fault suites need the stack in containers: make test-compose and make test-compose-cluster run them
    // (vitest.compose.config.ts, vitest.compose-cluster.config.ts); the release test an engine and a registry: make
    // test-release (vitest.release.config.ts). The soak runs for minutes: make test-soak (vitest.soak.config.ts).
    exclude: [...configDefaults.exclude, "**/*.compose.test.ts", "**/*.release.test.ts", "**/*.soak.test.ts"],
    globalSetup: ["libs/testing/src/global-setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
