import { defineConfig } from "vitest/config";
import compose from "./vitest.compose.config.ts";

/**
 * make test-compose-cluster (scripts/compose/test-cluster.sh): the NATS cluster's fault test against the stack the
 * script brought up with docker-compose.cluster.yml, as the compose test runs (its tests in order, verbose). Its own
 * `include` replaces the compose test's: vitest's mergeConfig would append to it, running both suites.
 */
export default defineConfig({
  ...compose,
  test: { ...compose.test, include: ["tools/stack/src/compose-test/nats-cluster.compose.test.ts"] },
});
