/**
 * The sync server's program (`bin.ts` launches it; `./ocs start`).
 *
 *   ocs-sync-server                      the demo: bundled simulator, demo tenant, embedded SQLite
 *   ocs-sync-server --config ocs.yaml    your configuration (YAML or JSON), then OCS_* overrides
 *   ocs-sync-server --demo --config f    the demo on top of your configuration (plugins, admin key)
 *   ocs-sync-server --fresh              the demo from nothing: its data folder is emptied first
 *   ocs-sync-server --postgres           also projected into a local PostgreSQL (readModels.store: postgres)
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Runtime } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import * as Config from "./boot/Config.ts"
import * as Demo from "./boot/Demo.ts"
import * as Drain from "./cluster/Drain.ts"
import { HeapProfile, Telemetry } from "@ocs/observability"
import * as Server from "./http/Server.ts"

const { values } = parseArgs({
  options: {
    config: { type: "string", short: "c" },
    "data-dir": { type: "string" },
    port: { type: "string" },
    "simulator-port": { type: "string", default: "8788" },
    demo: { type: "boolean" },
    fresh: { type: "boolean" },
    postgres: { type: "boolean" },
    "drain-outbox": { type: "boolean" },
    help: { type: "boolean", short: "h" }
  }
})

if (values.help) {
  console.log(`ocs-sync-server: keeps many businesses' commerce data in sync (Open Commerce Service API v3.0)

  --config, -c FILE      configuration file (YAML or JSON); without it (and without OCS_CONFIG)
                         the demo runs: the bundled simulator and a demo tenant
  --data-dir DIR         folder of the SQLite files (default .ocs-data)
  --demo                 run the demo (bundled simulator, demo tenant) even with --config,
                         on top of that configuration (its admin key, plugins, data folder)
  --fresh                the demo only: empty its data folder (.ocs-data/demo, or --data-dir)
                         first; without it the demo keeps its log and read models across runs
  --postgres             start a local PostgreSQL 15 (Debian's binaries; data in a temporary
                         folder, deleted when the server stops) and run with
                         readModels.store: postgres: the admin read routes and the console
                         read it; its URL is logged (docs/postgres.md)
  --drain-outbox         Kafka mode: relay what this data folder's outbox holds past its relay
                         cursor to the topic, then exit (a server that will not come back;
                         never beside a server running on the same folder)
  --port N               server port (default 8787)
  --simulator-port N     the demo's simulator port (default 8788)

Environment: OCS_CONFIG (file), OCS_ENCRYPTION_KEY (32 bytes, hex or base64), and any setting
as OCS_<PATH> with __ between levels, e.g. OCS_SERVER__ADMIN_KEY, OCS_EVENT_LOG__MODE=kafka.`)
  process.exit(0)
}

const file = values.config ?? process.env["OCS_CONFIG"]
const demo = file === undefined || values.demo === true

if (values.fresh === true) {
  // Only the demo's own folder: a configured data folder holds data nobody should lose to a flag.
  if (file !== undefined) {
    console.error("ocs-sync-server: --fresh empties the demo's data folder and applies only without --config/OCS_CONFIG; remove a configured dataDir yourself")
    process.exit(2)
  }
  const dir = Path.resolve(values["data-dir"] ?? Path.join(".ocs-data", "demo"))
  Fs.rmSync(dir, { recursive: true, force: true })
  console.error(`ocs-sync-server: --fresh: emptied ${dir}`)
}

const program = Effect.gen(function*() {
  const overrides: Record<string, unknown> = {}
  if (values["data-dir"] !== undefined) overrides["dataDir"] = values["data-dir"]
  if (values.port !== undefined) overrides["server"] = { port: Number(values.port) }
  if (file === undefined && values["data-dir"] === undefined) overrides["dataDir"] = Path.join(".ocs-data", "demo")
  if (values.postgres === true) {
    // A development server (the project's tooling, loaded only with the flag): stopped and
    // deleted when this process ends, whatever way it ends.
    const { startPostgres } = yield* Effect.promise(() => import("@ocs/postgres-server"))
    const server = yield* Effect.acquireRelease(Effect.promise(() => startPostgres()), (s) => Effect.promise(() => s.close()))
    const url = yield* Effect.promise(() => server.createDatabase("ocs"))
    overrides["readModels"] = { store: "postgres", postgres: { url } }
    yield* Effect.logInfo(`--postgres: PostgreSQL ${server.version} at ${url} (temporary: deleted when the server stops); psql "${url}" -c 'SET search_path = ocs_read_models' ...`)
  }
  let config = yield* Config.load({ file, env: process.env, overrides })
  if (values["drain-outbox"] === true) {
    const report = yield* Drain.drainOutbox(config)
    yield* Effect.logInfo(report.relayed === 0
      ? `outbox: nothing to relay to ${report.topic}`
      : `outbox: relayed ${report.relayed} record(s) to ${report.topic} in ${report.millis} ms`)
    return
  }
  // Before anything is started or written: the process may be replaced by itself under the
  // configured heap profile.
  const profile = HeapProfile.profileOf(config)
  const relaunch = HeapProfile.relaunch(profile, process)
  if (relaunch !== undefined) {
    // Returns only if it could not replace the process (older Node, another platform).
    const why = typeof process.execve !== "function"
      ? "this Node has no process.execve"
      : yield* Effect.try(() => process.execve!(process.execPath, [...relaunch.args], relaunch.env)).pipe(
        Effect.match({ onFailure: (e) => String(e.cause), onSuccess: () => "process.execve returned" })
      )
    const { env, flags } = relaunch.launch
    yield* Effect.logWarning(`heap profile ${profile} not applied (${why}): start node with ${flags.join(" ") || "no flags"} ${JSON.stringify(env)}; running as launched`)
  }
  // The first line says what this run is made of, so a wrong file or folder shows at once
  // (written after the heap profile's re-execution, so once).
  yield* Effect.logInfo(file === undefined
    ? `no configuration given: running the demo (bundled simulator, demo tenant, embedded SQLite) in ${Path.resolve(config.dataDir)}`
    : `configuration ${Path.resolve(file)}${demo ? " with the demo on top (bundled simulator, demo tenant)" : ""}: ${config.eventLog.mode} event log in ${Path.resolve(config.dataDir)}`)
  let sim: { readonly url: string; readonly demo: Demo.DemoInfo } | undefined
  if (demo) {
    sim = yield* Demo.simulator("127.0.0.1", Number(values["simulator-port"]))
    config = Demo.demoConfig(config, sim.demo)
  }
  // The server's own scope closes inside the layers' scope: on shutdown it stops the HTTP
  // server, the loops and the final projection while the log and read models are still open.
  return yield* Effect.gen(function*() {
    const server = yield* Server.start(config)
    if (sim !== undefined) yield* Demo.drive(sim.url, sim.demo, server, config.server.adminKey!)
    return yield* Effect.never
  }).pipe(Effect.scoped, Effect.provide(Server.layer(config)), Effect.provide(Telemetry.layerLogging(config.logLevel)))
}).pipe(Effect.scoped)

program.pipe(
  Effect.provide(Telemetry.layerLogging(undefined)),
  Effect.tapError((e) => Effect.sync(() => console.error(`ocs-sync-server: ${e instanceof Error ? e.message : String(e)}`))),
  NodeRuntime.runMain({
    // Stopped by a signal (SIGTERM, Ctrl-C) after a graceful shutdown: that is success.
    teardown: (exit, onExit) =>
      exit._tag === "Failure" && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
  })
)

