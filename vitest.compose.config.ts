import { defineConfig } from "vitest/config";
import { CONDITIONS } from "./vitest.config.ts";

/**
 * make test-compose (scripts/compose/test.sh): the fault suite against the stack in containers the script brought
 * up, with the workspace's source conditions but not `make test`'s global setup (the stack has its own Postgres
 * and NATS). One file, its tests in order: the faults share one workload, the invariants check what it left.
 */
export default defineConfig({
  resolve: { conditions: CONDITIONS },
  ssr: { resolve: { conditions: CONDITIONS } },
  test: {
    include: ["tools/stack/src/compose-test/faults.compose.test.ts"],
    // Each fault and each invariant on its own line, with its duration.
    reporters: ["verbose"],
    pool: "forks",
    testTimeout: 300_000,
    hookTimeout: 600_000,
  },
});
