import { defineConfig } from "vitest/config"

// One project per package. Suites that need the Kafka broker live in `test/kafka/` of their
// package and run in the `kafka` project, which starts a real broker once (tooling/kafka);
// suites that need PostgreSQL live in `test/postgres/` and run in the `postgres` project, which
// starts a real server once (tooling/postgres).
//
// Scheduling: most test files wait on real processes, sockets and the broker more than they
// compute, so the package projects and the Kafka project run PARALLEL files at once (group 0),
// more than the default of one worker a spare core. The reliability project measures memory,
// latency and floods, and the console drives Chromium: each runs its files one at a time, after
// group 0, alone on the machine (groups 1 and 2), so no other suite skews what they measure.
const PARALLEL = 3
// A test's timeout is a guard against hangs, not a speed target: suites that start real
// processes (servers, the replay CLI, npm) many times per test get a longer one.
const pkg = (name: string, dir: string, exclude: ReadonlyArray<string> = [], testTimeout = 30_000) => ({
  extends: true as const,
  test: {
    name,
    root: `./${dir}`,
    include: ["test/**/*.test.ts"],
    exclude: ["test/kafka/**", "test/postgres/**", "**/node_modules/**", ...exclude],
    testTimeout,
    maxWorkers: PARALLEL,
    sequence: { groupOrder: 0 }
  }
})

export default defineConfig({
  test: {
    // The engine's suites run against the simulator's strict mode (refusing what the real
    // service tolerates), so the engine is held to the documented protocol; its leniency is
    // tested by the simulator's own suite with `strict: false` (docs/api-catalogue.md).
    env: { OCS_SIMULATOR_STRICT: "1" },
    reporters: ["default", "./tooling/vitest/summary-reporter.ts"],
    testTimeout: 30_000,
    maxWorkers: PARALLEL,
    hookTimeout: 120_000,
    projects: [
      pkg("protocol", "packages/protocol"),
      pkg("simulator", "packages/simulator"),
      pkg("sqlite", "packages/sqlite"),
      pkg("transport", "packages/transport"),
      pkg("event-log", "packages/event-log"),
      pkg("read-models", "packages/read-models"),
      pkg("ingestion", "packages/ingestion"),
      pkg("sync", "packages/sync"),
      pkg("commands", "packages/commands"),
      pkg("tenant-store", "packages/tenant-store"),
      pkg("observability", "packages/observability"),
      pkg("config", "packages/config"),
      // The console's browser suite runs in its own project ("console", below).
      pkg("sync-server", "apps/sync-server", ["test/console/**"], 180_000),
      pkg("replay", "apps/replay", [], 180_000),
      pkg("plugin-sdk", "packages/plugin-sdk"),
      pkg("plugin-runtime", "packages/plugin-runtime"),
      pkg("plugin-low-stock-alert", "plugins/low-stock-alert"),
      pkg("plugin-auto-restock", "plugins/auto-restock"),
      pkg("plugin-order-forwarder", "plugins/order-forwarder"),
      pkg("plugin-plugin-template", "plugins/plugin-template"),
      pkg("kafka-broker", "tooling/kafka"),
      pkg("postgres-server", "tooling/postgres"),
      pkg("structure", "tooling/structure"),
      {
        // Crashes, outages, hostile input, isolation: the real processes, counted.
        extends: true as const,
        test: {
          name: "reliability",
          root: "./tooling/reliability",
          include: ["test/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
          testTimeout: 300_000,
          maxWorkers: 1,
          sequence: { groupOrder: 1 }
        }
      },
      {
        // The operator console in real Chromium (Debian's package, installed by
        // tooling/scripts/install-chromium.sh from the global setup) against real servers.
        extends: true as const,
        test: {
          name: "console",
          root: "./apps/sync-server",
          include: ["test/console/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
          globalSetup: ["./test/console/globalSetup.ts"],
          testTimeout: 90_000,
          maxWorkers: 1,
          sequence: { groupOrder: 2 }
        }
      },
      {
        extends: true as const,
        test: {
          name: "kafka",
          root: ".",
          include: ["packages/*/test/kafka/**/*.test.ts", "apps/*/test/kafka/**/*.test.ts", "tooling/kafka/test/kafka/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
          // Starts one real broker for the whole project; under CI=true a broker that cannot
          // start fails the run instead of skipping the suites.
          globalSetup: ["./tooling/kafka/src/globalSetup.ts"],
          maxWorkers: PARALLEL,
          sequence: { groupOrder: 0 }
        }
      },
      {
        extends: true as const,
        test: {
          name: "postgres",
          root: ".",
          include: ["packages/*/test/postgres/**/*.test.ts", "apps/*/test/postgres/**/*.test.ts", "tooling/postgres/test/postgres/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
          // Starts one real PostgreSQL 15 server for the whole project (each file takes a fresh
          // database of it); under CI=true a server that cannot start fails the run.
          globalSetup: ["./tooling/postgres/src/globalSetup.ts"],
          maxWorkers: PARALLEL,
          sequence: { groupOrder: 0 }
        }
      }
    ]
  }
})
