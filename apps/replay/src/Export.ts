/**
 * `export`: log records (filters as `audit`) or a read-model table, as NDJSON or CSV, to
 * stdout or a file. Both are read in pages (keyset), so memory stays bounded.
 */
import type { LogRecord } from "@ocs/event-log"
import type { SqliteDatabase } from "@ocs/sqlite"
import * as Json from "@ocs/protocol/Json"
import { Views } from "@ocs/read-models"
import { Effect, Option, Result, Stream } from "effect"
import * as Audit from "./Audit.ts"
import * as Output from "./Output.ts"
import * as ReadModelFile from "./ReadModelFile.ts"
import * as Records from "./Records.ts"
import { UsageError } from "./ReplayError.ts"

export type Format = "ndjson" | "csv"

export const log = Effect.fn("Export.log")(function*(options: Audit.AuditOptions & { readonly exportFormat: Format }, out: string | undefined) {
  const records = yield* Audit.select(options)
  return yield* Effect.scoped(Effect.gen(function*() {
    const writer = yield* Output.open(out)
    if (options.exportFormat === "csv") yield* writer.write(Output.csvLine(Records.CSV_HEADER))
    let n = 0
    yield* records.pipe(Stream.runForEachArray((page) => {
      n += page.length
      return writer.write(page.map(options.exportFormat === "csv" ? Records.csvLine : Records.jsonLine).join(""))
    }))
    return n
  }))
})

const PAGE = 1000

/** Rows of one table in rowid order, `PAGE` at a time. */
const rows = (db: SqliteDatabase.Handle, spec: ReadModelFile.TableSpec, tenant: Views.Tenant | undefined) => {
  const cols = spec.columns.map((c) => `"${c}"`).join(", ")
  const scoped = tenant !== undefined && spec.tenantScoped
  const sql = `SELECT _rowid_ AS "__rowid", ${cols} FROM "${spec.name}" WHERE _rowid_ > ?${scoped ? " AND app_id = ? AND business_id = ?" : ""} ORDER BY _rowid_ LIMIT ${PAGE}`
  return Stream.unwrap(Effect.map(db.use("prepare", (_, client) => client.prepare(sql).raw(true)), (statement) =>
    Stream.paginate(0, (cursor: number) =>
      db.use("read", () => (scoped ? statement.all(cursor, tenant!.appId, tenant!.businessId) : statement.all(cursor)) as Array<Array<unknown>>).pipe(
        Effect.map((page) => [page, page.length === PAGE ? Option.some(page[page.length - 1]![0] as number) : Option.none<number>()] as const)
      ))))
}

/** JSON columns are embedded as JSON (parsed losslessly), not as strings holding JSON. */
const rowJson = (spec: ReadModelFile.TableSpec, row: ReadonlyArray<unknown>): string => {
  const object: Record<string, unknown> = {}
  spec.columns.forEach((c, i) => {
    const v = row[i + 1]
    if (typeof v === "string" && ReadModelFile.JSON_COLUMNS.has(c)) {
      const parsed = Json.parse(v)
      object[c] = Result.isSuccess(parsed) ? parsed.success : v
    } else object[c] = v
  })
  return `${Json.stringify(object)}\n`
}

export const table = Effect.fn("Export.table")(function*(options: {
  readonly table: string
  readonly db: string
  readonly tenant?: LogRecord.TenantKey | undefined
  readonly format: Format
}, out: string | undefined) {
  return yield* Effect.scoped(Effect.gen(function*() {
    const db = yield* ReadModelFile.open(options.db, "read-model file (--db)")
    const names = (yield* ReadModelFile.tables(db)).filter((t) => t !== "applied_records")
    if (!names.includes(options.table)) {
      return yield* new UsageError({ message: `no table "${options.table}" in ${options.db}; tables: ${names.join(", ")}` })
    }
    const spec = yield* ReadModelFile.spec(db, options.table)
    const writer = yield* Output.open(out)
    if (options.format === "csv") yield* writer.write(Output.csvLine(spec.columns))
    let n = 0
    yield* rows(db, spec, options.tenant === undefined ? undefined : Views.tenantOf(options.tenant)).pipe(
      Stream.runForEachArray((page) => {
        n += page.length
        return writer.write(page.map((row) => (options.format === "csv" ? Output.csvLine(row.slice(1)) : rowJson(spec, row))).join(""))
      })
    )
    return n
  }))
})
