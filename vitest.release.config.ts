import { defineConfig } from "vitest/config";
import { CONDITIONS } from "./vitest.config.ts";

/**
 * make test-release (scripts/test-release.sh): the release path against a Docker engine and an image registry
 * (`make images PUSH=1`, the digests it prints, the prod overlay validated with them).
 */
export default defineConfig({
  resolve: { conditions: CONDITIONS },
  ssr: { resolve: { conditions: CONDITIONS } },
  test: {
    include: ["tools/stack/src/release/*.release.test.ts"],
    reporters: ["verbose"],
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 1_800_000,
  },
});
