/**
 * `replay`: rebuilds the read models from the log into a new SQLite file (`ReadModels.rebuild`),
 * for all tenants or one, up to an offset or an instant, with progress on stderr.
 */
import { EventLog, type LogRecord } from "@ocs/event-log"
import { ReadModels, Views } from "@ocs/read-models"
import { Effect, Stream } from "effect"
import * as NodeFs from "node:fs"
import { LogSource } from "./LogSource.ts"
import * as Progress from "./Progress.ts"
import * as ReadModelFile from "./ReadModelFile.ts"
import { InputFileError } from "./ReplayError.ts"

export interface Options {
  readonly out: string
  readonly tenant?: LogRecord.TenantKey | undefined
  readonly untilOffset?: number | undefined
  readonly untilMs?: number | undefined
  readonly progress: Progress.Mode
  /** Records per transaction (default 5000, as `rebuild`). */
  readonly batchSize?: number | undefined
  readonly label?: string | undefined
}

export interface Summary {
  readonly out: string
  readonly source: string
  readonly tenant: string
  readonly untilOffset: number | null
  readonly until: string | null
  readonly records: number
  readonly events: number
  readonly lastOffset: number | null
  readonly seconds: number
  readonly recordsPerSecond: number
  readonly eventsPerSecond: number
  /** Rows per projected table in the new file. */
  readonly tables: Readonly<Record<string, number>>
}

export const run = Effect.fn("Replay.run")(function*(options: Options) {
  const source = yield* LogSource
  if (NodeFs.existsSync(options.out)) {
    return yield* new InputFileError({ filename: options.out, message: `${options.out} exists; replay writes a new file (remove it or choose another --out)` })
  }
  const started = performance.now()
  const query = { tenant: options.tenant, untilOffset: options.untilOffset, toMs: options.untilMs }
  const total = yield* source.count(query)
  const stats = yield* Effect.scoped(Effect.gen(function*() {
    const progress = yield* Progress.start({ label: options.label ?? "replay", total, mode: options.progress })
    const counting: EventLog.EventLogService = {
      ...source.eventLog,
      read: (o) =>
        source.eventLog.read(o).pipe(Stream.mapArray((page) => {
          progress.add(page.length)
          return page
        }))
    }
    const stats = yield* ReadModels.rebuild({
      filename: options.out,
      tenant: options.tenant === undefined ? undefined : Views.tenantOf(options.tenant),
      untilOffset: options.untilOffset,
      untilReceivedAt: options.untilMs,
      batchSize: options.batchSize
    }).pipe(Effect.provideService(EventLog.EventLog, counting))
    yield* progress.finish
    return stats
  }))
  const tables = yield* Effect.scoped(Effect.flatMap(
    ReadModelFile.open(options.out, "the replayed file"),
    (db) => ReadModelFile.rowCounts(db, options.tenant === undefined ? undefined : Views.tenantOf(options.tenant))
  ))
  const seconds = (performance.now() - started) / 1000
  return {
    out: options.out,
    source: source.description,
    tenant: options.tenant ?? "all",
    untilOffset: options.untilOffset ?? null,
    until: options.untilMs === undefined ? null : new Date(options.untilMs).toISOString(),
    records: stats.records,
    events: stats.events,
    lastOffset: stats.lastOffset ?? null,
    seconds,
    recordsPerSecond: seconds > 0 ? stats.records / seconds : 0,
    eventsPerSecond: seconds > 0 ? stats.events / seconds : 0,
    tables
  } satisfies Summary
})
