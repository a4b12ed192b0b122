/**
 * `verify`: checks the log's own integrity (./LogIntegrity.ts), then rebuilds the read models
 * from the log into a temporary file and compares them with a live read-model file, table by
 * table and entity by entity (missing, extra, changed columns).
 *
 * Both files are read in key order and merged (like a sorted merge join), so memory stays
 * bounded whatever their size. Compared columns are the digest's: content only, not which
 * observation a row came from (`last_*`).
 */
import { Checkpoints, type LogRecord } from "@ocs/event-log"
import type { SqliteDatabase } from "@ocs/sqlite"
import * as Json from "@ocs/protocol/Json"
import { Views } from "@ocs/read-models"
import { Effect, Option, Result } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as FieldDiff from "./FieldDiff.ts"
import * as LogIntegrity from "./LogIntegrity.ts"
import type * as Progress from "./Progress.ts"
import * as ReadModelFile from "./ReadModelFile.ts"
import * as Replay from "./Replay.ts"
import { CommandFailed } from "./ReplayError.ts"

export interface Options {
  readonly live: string
  readonly tenant?: LogRecord.TenantKey | undefined
  readonly untilOffset?: number | undefined
  readonly untilMs?: number | undefined
  /** Without a bound, stop at the live file's checkpoint (what it has projected). Default true. */
  readonly useCheckpoint: boolean
  readonly consumer: string
  readonly progress: Progress.Mode
  /** Differences listed in full (all are counted). */
  readonly maxDifferences: number
  /** Check the log itself first (default true). */
  readonly checkLog?: boolean | undefined
  /** The window within which a tenant's dedupe key must not repeat (default a day). */
  readonly dedupeWindowMillis?: number | undefined
}

export interface ColumnChange {
  readonly column: string
  /** From the log (the rebuilt file). */
  readonly expected: unknown
  /** In the live file. */
  readonly live: unknown
  /** For JSON columns: what differs inside, from the log's value to the live one. */
  readonly fields?: ReadonlyArray<FieldDiff.Change> | undefined
}

export interface Difference {
  readonly table: string
  /** Key values joined by ":" (e.g. `1001:42:9007199254740993`). */
  readonly entity: string
  readonly key: Readonly<Record<string, unknown>>
  /** missing: the log has it, the live file does not; extra: the other way round. */
  readonly kind: "missing" | "extra" | "changed"
  readonly columns?: ReadonlyArray<ColumnChange> | undefined
}

export interface TableReport {
  readonly expectedRows: number
  readonly liveRows: number
  readonly missing: number
  readonly extra: number
  readonly changed: number
}

export interface Report {
  /** The read models match and the log has no integrity problem. */
  readonly equal: boolean
  /** The log's own check; null when skipped. */
  readonly log: LogIntegrity.Report | null
  readonly live: string
  readonly source: string
  readonly tenant: string
  readonly untilOffset: number | null
  readonly until: string | null
  readonly records: number
  readonly differences: number
  readonly tables: Readonly<Record<string, TableReport>>
  /** The first `maxDifferences` differences. */
  readonly details: ReadonlyArray<Difference>
}

/** SQLite's BINARY order of text is the UTF-8 byte order, which is code point order. */
const compareText = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    // Surrogates (code points above U+FFFF) sort after U+E000..U+FFFF in code point order.
    x = x >= 0xd800 && x <= 0xdfff ? x + 0x2000 : x >= 0xe000 ? x - 0x800 : x
    y = y >= 0xd800 && y <= 0xdfff ? y + 0x2000 : y >= 0xe000 ? y - 0x800 : y
    return x - y
  }
  return a.length - b.length
}

/** SQLite order: NULL < numbers < text. */
const compareValue = (a: unknown, b: unknown): number => {
  if (a === b) return 0
  if (a === null || a === undefined) return -1
  if (b === null || b === undefined) return 1
  if (typeof a === "number" && typeof b === "number") return a - b
  if (typeof a === "number") return -1
  if (typeof b === "number") return 1
  return compareText(String(a), String(b))
}

const compareKey = (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>, n: number) => {
  for (let i = 0; i < n; i++) {
    const c = compareValue(a[i], b[i])
    if (c !== 0) return c
  }
  return 0
}

const parsed = (text: unknown): unknown => {
  if (typeof text !== "string") return text
  const r = Json.parse(text)
  return Result.isSuccess(r) ? r.success : text
}

const compareTable = (
  expected: SqliteDatabase.Handle,
  live: SqliteDatabase.Handle,
  spec: ReadModelFile.TableSpec,
  tenant: Views.Tenant | undefined,
  onDifference: (d: Difference) => void
) =>
  Effect.gen(function*() {
    const liveColumns = new Set((yield* ReadModelFile.spec(live, spec.name)).columns)
    const absent = [...spec.key, ...spec.content].filter((c) => !liveColumns.has(c))
    if (absent.length > 0) {
      return yield* new CommandFailed({
        message: `the live file's table ${spec.name} lacks column(s) ${absent.join(", ")}: was it written by another version of the read models?`,
        cause: undefined
      })
    }
    const cols = [...spec.key, ...spec.content].map((c) => `"${c}"`).join(", ")
    const where = tenant !== undefined && spec.tenantScoped ? " WHERE app_id = ? AND business_id = ?" : ""
    const sql = `SELECT ${cols} FROM "${spec.name}"${where} ORDER BY ${spec.key.map((c) => `"${c}"`).join(", ")}`
    const params = where === "" ? [] : [tenant!.appId, tenant!.businessId]
    const k = spec.key.length
    return yield* Effect.try({
      try: () => {
        const a = expected.client.prepare(sql).raw(true).iterate(...params) as IterableIterator<Array<unknown>>
        const b = live.client.prepare(sql).raw(true).iterate(...params) as IterableIterator<Array<unknown>>
        const report = { expectedRows: 0, liveRows: 0, missing: 0, extra: 0, changed: 0 }
        const keyOf = (row: ReadonlyArray<unknown>) => Object.fromEntries(spec.key.map((c, i) => [c, row[i]]))
        const entityOf = (row: ReadonlyArray<unknown>) => row.slice(0, k).map((v) => String(v)).join(":")
        let x = a.next()
        let y = b.next()
        while (!x.done || !y.done) {
          const c = x.done ? 1 : y.done ? -1 : compareKey(x.value, y.value, k)
          if (c < 0) {
            report.expectedRows++
            report.missing++
            onDifference({ table: spec.name, entity: entityOf(x.value!), key: keyOf(x.value!), kind: "missing" })
            x = a.next()
          } else if (c > 0) {
            report.liveRows++
            report.extra++
            onDifference({ table: spec.name, entity: entityOf(y.value!), key: keyOf(y.value!), kind: "extra" })
            y = b.next()
          } else {
            report.expectedRows++
            report.liveRows++
            const columns: Array<ColumnChange> = []
            for (let i = 0; i < spec.content.length; i++) {
              const e = x.value![k + i]
              const l = y.value![k + i]
              if (e === l) continue
              const column = spec.content[i]!
              const fields = ReadModelFile.JSON_COLUMNS.has(column) ? FieldDiff.diff(parsed(e), parsed(l)) : undefined
              columns.push({ column, expected: e, live: l, fields })
            }
            if (columns.length > 0) {
              report.changed++
              onDifference({ table: spec.name, entity: entityOf(x.value!), key: keyOf(x.value!), kind: "changed", columns })
            }
            x = a.next()
            y = b.next()
          }
        }
        return report
      },
      catch: (cause) => new CommandFailed({ message: `comparing table ${spec.name}: ${cause instanceof Error ? cause.message : String(cause)}`, cause })
    })
  })

/** The offset a live file has projected up to (SQLite checkpoints only). */
const liveCheckpoint = (live: SqliteDatabase.Handle, consumer: string) =>
  live.use("checkpoint", (orm) => {
    const stored = Checkpoints.load(orm, consumer)
    return Option.isSome(stored) ? Checkpoints.parseSqlite(stored.value) : undefined
  }).pipe(Effect.orElseSucceed(() => undefined))

export const run = Effect.fn("Verify.run")(function*(options: Options) {
  const tenant = options.tenant === undefined ? undefined : Views.tenantOf(options.tenant)
  return yield* Effect.scoped(Effect.gen(function*() {
    const live = yield* ReadModelFile.open(options.live, "live read-model file")
    const bounded = options.untilOffset !== undefined || options.untilMs !== undefined
    const untilOffset = options.untilOffset ?? (!bounded && options.useCheckpoint ? yield* liveCheckpoint(live, options.consumer) : undefined)
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "ocs-verify-"))),
      (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
    )
    const log = options.checkLog === false ? null : yield* LogIntegrity.run({
      tenant: options.tenant,
      untilOffset,
      dedupeWindowMillis: options.dedupeWindowMillis ?? 24 * 3600 * 1000,
      workDir: dir,
      maxProblems: options.maxDifferences
    })
    const replayed = yield* Replay.run({
      out: NodePath.join(dir, "expected.sqlite"),
      tenant: options.tenant,
      untilOffset,
      untilMs: options.untilMs,
      progress: options.progress,
      label: "verify (replay)"
    })
    const expected = yield* ReadModelFile.open(replayed.out, "replayed file")
    const details: Array<Difference> = []
    let count = 0
    const onDifference = (d: Difference) => {
      count++
      if (details.length < options.maxDifferences) details.push(d)
    }
    const tables: Record<string, TableReport> = {}
    for (const table of ReadModelFile.PROJECTED_TABLES) {
      const spec = yield* ReadModelFile.spec(expected, table)
      tables[table] = yield* compareTable(expected, live, spec, tenant, onDifference)
    }
    return {
      equal: count === 0 && (log === null || log.problems === 0),
      log,
      live: options.live,
      source: replayed.source,
      tenant: options.tenant ?? "all",
      untilOffset: untilOffset ?? null,
      until: replayed.until,
      records: replayed.records,
      differences: count,
      tables,
      details
    } satisfies Report
  }))
})

export interface CompareReport {
  readonly equal: boolean
  /** The first file; a row only there is `missing` (from the second). */
  readonly a: string
  /** The second file; a row only there is `extra`. */
  readonly b: string
  readonly tenant: string
  readonly differences: number
  readonly tables: Readonly<Record<string, TableReport>>
  readonly details: ReadonlyArray<Difference>
}

/**
 * `compare`: two read-model files, with the same merge as `verify` (e.g. yesterday's replay and
 * today's, or two servers' files). `expectedRows`/`missing` are the first file's side.
 */
export const compareFiles = Effect.fn("Verify.compareFiles")(function*(options: {
  readonly a: string
  readonly b: string
  readonly tenant?: LogRecord.TenantKey | undefined
  readonly maxDifferences: number
}) {
  const tenant = options.tenant === undefined ? undefined : Views.tenantOf(options.tenant)
  return yield* Effect.scoped(Effect.gen(function*() {
    const a = yield* ReadModelFile.open(options.a, "first read-model file")
    const b = yield* ReadModelFile.open(options.b, "second read-model file")
    const details: Array<Difference> = []
    let count = 0
    const tables: Record<string, TableReport> = {}
    for (const table of ReadModelFile.PROJECTED_TABLES) {
      const spec = yield* ReadModelFile.spec(a, table)
      tables[table] = yield* compareTable(a, b, spec, tenant, (d) => {
        count++
        if (details.length < options.maxDifferences) details.push(d)
      })
    }
    return { equal: count === 0, a: options.a, b: options.b, tenant: options.tenant ?? "all", differences: count, tables, details } satisfies CompareReport
  }))
})
