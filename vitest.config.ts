import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

/** Workspace packages export their TypeScript sources under this condition, and dist/ to everyone else. */
const SOURCE_CONDITION = "@humanpass/source";

export default defineConfig({
  resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
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
    globalSetup: ["libs/testing/src/global-setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
