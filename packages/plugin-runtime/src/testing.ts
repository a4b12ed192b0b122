/**
 * The end-to-end harness for plugin tests (`@ocs/plugin-runtime/testing`; list
 * `@ocs/plugin-runtime` as a devDependency): a real SQLite event log, read models and plugin
 * runtime in a temporary folder, removed when the scope closes. `append` records, then assert.
 * The in-memory helpers (`runPlugin`, `webhook`, `webhookRecord`) are `@ocs/plugin-sdk/testing`.
 */
import { Context, Effect, Layer, type Scope, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { EventLog, type LogRecord, SqliteEventLog } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import type { Plugin } from "@ocs/plugin-sdk"
import { PluginRuntime, type PluginRuntimeService, type Options as RuntimeOptions, type StartError } from "./PluginRuntime.ts"

export interface Harness {
  readonly dir: string
  readonly runtime: PluginRuntimeService
  /**
   * Appends records to the log, projects them into the read models (which relay the changes they
   * reveal), and waits for every plugin to have handled everything in the log.
   */
  readonly append: (records: ReadonlyArray<LogRecord.NewRecord>) => Effect.Effect<ReadonlyArray<number>, unknown>
}

export interface HarnessOptions {
  readonly plugins: ReadonlyArray<Plugin.Installed>
  /** Folder of the SQLite files (default: a new temporary folder, removed when the scope closes). */
  readonly dir?: string | undefined
  readonly runtime?: Partial<Omit<RuntimeOptions, "plugins">> | undefined
}

/**
 * A real SQLite event log, read models and plugin runtime in a folder, for end-to-end tests. Like
 * the sync server, plugins follow the change stream (`changeStream`, docs/architecture.md §4.14)
 * unless `runtime` says otherwise.
 */
export const harness = Effect.fnUntraced(function*(options: HarnessOptions): Effect.fn.Return<Harness, StartError | unknown, Scope.Scope> {
  const dir = options.dir ?? (yield* Effect.acquireRelease(
    Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "ocs-plugin-"))),
    // Released after the runtime, log and read models that the layer below opened in it.
    (made) => Effect.sync(() => NodeFs.rmSync(made, { recursive: true, force: true }))
  ))
  const base = Layer.mergeAll(
    SqliteEventLog.layer({ filename: NodePath.join(dir, "events.sqlite"), synchronous: "NORMAL", pollIntervalMillis: 50 }),
    ReadModels.ReadModels.layer({ filename: NodePath.join(dir, "read-models.sqlite") })
  )
  const runtimeLayer = PluginRuntime.layer({
    filename: NodePath.join(dir, "plugins.sqlite"),
    changeStream: true,
    ...options.runtime,
    plugins: options.plugins
  })
  const context = yield* Layer.build(Layer.provideMerge(runtimeLayer, base))
  const log = Context.get(context, EventLog.EventLog)
  const rm = Context.get(context, ReadModels.ReadModels)
  const runtime = Context.get(context, PluginRuntime)
  return {
    dir,
    runtime,
    append: (records) =>
      Effect.gen(function*() {
        const results = yield* log.append(records)
        // Projects the records, relays the changes they revealed, and projects those too.
        yield* rm.catchUp().pipe(Effect.provideService(EventLog.EventLog, log))
        yield* rm.catchUp().pipe(Effect.provideService(EventLog.EventLog, log))
        const offsets = results.map((r) => r.offset)
        if (offsets.length > 0) {
          const later = yield* Stream.runCollect(log.read({ tenant: "all", from: Math.max(...offsets) }))
          yield* runtime.awaitOffset(Math.max(...offsets, ...later.map((r) => r.offset)))
        }
        return offsets
      })
  }
})
