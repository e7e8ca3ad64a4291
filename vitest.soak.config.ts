import { configDefaults, defineConfig } from "vitest/config";
import { CONDITIONS } from "./vitest.config.ts";

/**
 * make test-soak: the 3-minute soak (tools/stack/src/soak/stack.soak.test.ts) with `make test`'s global setup (the
 * machine's Postgres and NATS, or ones it starts), apart from `make test` because it runs for minutes on purpose.
 */
export default defineConfig({
  resolve: { conditions: CONDITIONS },
  ssr: { resolve: { conditions: CONDITIONS } },
  test: {
    include: ["tools/stack/src/soak/*.soak.test.ts"],
    exclude: [...configDefaults.exclude],
    globalSetup: ["libs/testing/src/global-setup.ts"],
    reporters: ["verbose"],
    pool: "forks",
    testTimeout: 60_000,
    // Start-up, the soak itself, settling and the checks: SOAK_MINUTES plus at most about 8 minutes.
    hookTimeout: (Number(process.env.SOAK_MINUTES ?? 3) + 8) * 60_000,
    teardownTimeout: 30_000,
  },
});
