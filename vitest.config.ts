import { defineConfig } from "vitest/config";

export default defineConfig({
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
