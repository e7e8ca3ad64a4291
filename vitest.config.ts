import { configDefaults, defineConfig } from "vitest/config";

/**
 * Workspace packages export their TypeScript sources under @humanpass/source, and dist/ to everyone else. Vitest
 * also passes these conditions to its worker processes as `--conditions`, so no `module`: Node would then load
 * packages' bundler-only ESM builds (@opentelemetry/api's has extensionless imports).
 */
const CONDITIONS = ["@humanpass/source", "node", "development|production"];

/** The machine's Postgres and NATS, or ones it starts (libs/testing). */
const GLOBAL_SETUP = ["libs/testing/src/global-setup.ts"];

/**
 * One project per suite, each run as `npx vitest run --project <name>`: `unit` is `make test`; the others need
 * what `make test` does not have (the stack in containers, a Docker engine and a registry, minutes), so their
 * files are kept out of `unit`. Every project inherits the source conditions (`extends: true`).
 */
export default defineConfig({
  resolve: { conditions: CONDITIONS },
  ssr: { resolve: { conditions: CONDITIONS } },
  test: {
    // Not a project setting: the longest any project needs (unit's and soak's).
    teardownTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: [
            "libs/*/src/**/*.test.ts",
            "libs/*/test/**/*.test.ts",
            "services/*/src/**/*.test.ts",
            "services/*/test/**/*.test.ts",
            "tools/*/src/**/*.test.ts",
            "tools/*/test/**/*.test.ts",
            "deploy/validate/**/*.test.ts",
          ],
          exclude: [
            ...configDefaults.exclude,
            "**/*.compose.test.ts",
            "**/*.release.test.ts",
            "**/*.soak.test.ts",
          ],
          globalSetup: GLOBAL_SETUP,
          pool: "forks",
          // Vitest's default is one worker fewer than the cores: one on a 2-core machine, which leaves the suite
          // waiting on Postgres, NATS, the devnet and child services in turn. Each file is isolated (its own
          // database and stream prefix), so two run side by side.
          maxWorkers: 2,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // make test-compose (scripts/compose/test.sh): the fault suite against the stack in containers the script
        // brought up, without the global setup (the stack has its own Postgres and NATS). One file, its tests in
        // order: the faults share one workload, the invariants check what it left.
        extends: true,
        test: {
          name: "compose",
          include: ["tools/stack/src/compose-test/faults.compose.test.ts"],
          pool: "forks",
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
      {
        // make test-compose-cluster (scripts/compose/test-cluster.sh): the NATS cluster's fault test against the
        // stack the script brought up with docker-compose.cluster.yml, as the compose test runs.
        extends: true,
        test: {
          name: "compose-cluster",
          include: ["tools/stack/src/compose-test/nats-cluster.compose.test.ts"],
          pool: "forks",
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
      {
        // make test-release (scripts/test-release.sh): the release path against a Docker engine and an image
        // registry (`make images PUSH=1`, the digests it prints, the prod overlay validated with them).
        extends: true,
        test: {
          name: "release",
          include: ["tools/stack/src/release/*.release.test.ts"],
          pool: "forks",
          testTimeout: 120_000,
          hookTimeout: 1_800_000,
        },
      },
      {
        // make test-soak: the soak (tools/stack/src/soak/stack.soak.test.ts) with the global setup, apart from
        // `make test` because it runs for minutes on purpose.
        extends: true,
        test: {
          name: "soak",
          include: ["tools/stack/src/soak/*.soak.test.ts"],
          exclude: [...configDefaults.exclude],
          globalSetup: GLOBAL_SETUP,
          pool: "forks",
          testTimeout: 60_000,
          // Start-up, the soak itself, settling and the checks: SOAK_MINUTES plus at most about 8 minutes.
          hookTimeout: (Number(process.env.SOAK_MINUTES ?? 3) + 8) * 60_000,
        },
      },
    ],
  },
});
