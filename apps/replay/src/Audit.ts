/**
 * `audit`: log records by tenant, type, entity, time range and source, as a table, a JSON
 * array or NDJSON, streamed page by page. `history`: every event that touched one entity, in
 * log order, with what it changed (field-level diff against the previous state of the same
 * facet: the product itself, its stock per depot, ...).
 */
import type { LogRecord } from "@ocs/event-log"
import * as Json from "@ocs/protocol/Json"
import { Effect, Stream } from "effect"
import * as Entity from "./Entity.ts"
import * as FieldDiff from "./FieldDiff.ts"
import { LogSource, type ReadError, type RecordQuery } from "./LogSource.ts"
import * as Output from "./Output.ts"
import * as Records from "./Records.ts"

export type Format = "table" | "json" | "ndjson"

export interface AuditOptions extends RecordQuery {
  readonly entity?: string | undefined
  readonly limit?: number | undefined
  readonly format: Format
}

/** The records an audit query selects (entity lookups: SQL pre-filter, then decode to confirm). */
export const select = (options: AuditOptions) =>
  Effect.gen(function*() {
    const source = yield* LogSource
    const entity = options.entity === undefined ? undefined : Entity.canonical(options.entity)
    const stream = source.records({ ...options, mentions: entity }).pipe(
      entity === undefined ? (s) => s : Stream.filter((r: LogRecord.LogRecord) => Entity.touches(r, entity))
    )
    return options.limit === undefined ? stream : Stream.take(stream, options.limit)
  })

/** Writes records in a format, page by page; returns how many. */
export const write = (
  records: Stream.Stream<LogRecord.LogRecord, ReadError>,
  writer: Output.Writer,
  format: Format,
  entity?: string
) =>
  Effect.gen(function*() {
    let n = 0
    if (format === "table") yield* writer.write(Records.tableHeader())
    if (format === "json") yield* writer.write("[")
    yield* records.pipe(Stream.runForEachArray((page) => {
      let text = ""
      for (const r of page) {
        if (format === "table") text += Records.tableLine(r, entity)
        else if (format === "ndjson") text += Records.jsonLine(r)
        else text += `${n === 0 ? "\n" : ",\n"}${Json.stringify(Records.toJson(r))}`
        n++
      }
      return writer.write(text)
    }))
    if (format === "json") yield* writer.write(n === 0 ? "]\n" : "\n]\n")
    if (format === "table") yield* writer.write(`(${n} record${n === 1 ? "" : "s"})\n`)
    return n
  })

export const audit = Effect.fn("Audit.audit")(function*(options: AuditOptions, out: string | undefined) {
  const records = yield* select(options)
  return yield* Effect.scoped(Effect.flatMap(Output.open(out), (writer) => write(records, writer, options.format, options.entity)))
})

export interface HistoryEntry {
  readonly offset: number
  readonly recordId: string
  readonly receivedAt: string
  readonly source: LogRecord.Source
  readonly type: string
  readonly event: string
  readonly index: number
  readonly facet: string
  readonly updatedAt: unknown
  /** First observation of this facet: every field is "added". */
  readonly first: boolean
  readonly changes: ReadonlyArray<FieldDiff.Change>
}

export interface HistoryOptions {
  readonly entity: string
  readonly tenant: LogRecord.TenantKey
  readonly fromMs?: number | undefined
  readonly toMs?: number | undefined
  readonly untilOffset?: number | undefined
  readonly format: "table" | "json" | "ndjson"
}

/**
 * An `updatedAt` as an ISO date: v3 records carry unix seconds (docs/api-catalogue.md), some
 * milliseconds, older ones text. Numbers below 10^11 are seconds (until the year 5138).
 */
export const isoOf = (value: unknown): string => {
  const n = typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : typeof value === "string" && /^\d+(\.\d+)?$/.test(value) ? Number(value) : undefined
  if (n === undefined || !Number.isFinite(n)) return typeof value === "string" ? value : Json.stringify(value)
  return Output.iso(n < 1e11 ? Math.round(n * 1000) : n)
}

const entryText = (e: HistoryEntry): string => {
  const head = `#${e.offset}  ${e.receivedAt}  ${e.source}  ${e.type}  ${e.event}${e.index > 0 ? `[${e.index}]` : ""}  ${e.facet}` +
    (e.updatedAt === undefined || e.updatedAt === null ? "" : `  updatedAt=${isoOf(e.updatedAt)}`)
  const body = e.changes.length === 0 ? ["    (no change)"] : e.changes.map((c) => `    ${FieldDiff.describe(c)}`)
  return `${head}\n${body.join("\n")}\n`
}

export const history = Effect.fn("Audit.history")(function*(options: HistoryOptions, out: string | undefined) {
  const source = yield* LogSource
  const id = Entity.canonical(options.entity)
  // Previous state per facet (a handful per entity): memory does not grow with the log.
  const previous = new Map<string, unknown>()
  const entries = source.records({ tenant: options.tenant, fromMs: options.fromMs, toMs: options.toMs, untilOffset: options.untilOffset, mentions: id }).pipe(
    Stream.flatMap((record) => {
      const list: Array<HistoryEntry> = []
      for (const o of Entity.observations(record, id)) {
        const before = previous.get(o.facet)
        previous.set(o.facet, o.state)
        list.push({
          offset: record.offset,
          recordId: record.id,
          receivedAt: Output.iso(record.receivedAt),
          source: record.source,
          type: record.type,
          event: o.tag,
          index: o.index,
          facet: o.facet,
          updatedAt: o.updatedAt,
          first: before === undefined,
          changes: FieldDiff.diff(before, o.state)
        })
      }
      // A record that names the entity in entity_id but has no decodable event (a system note).
      if (list.length === 0 && record.entityId === id) {
        list.push({
          offset: record.offset, recordId: record.id, receivedAt: Output.iso(record.receivedAt), source: record.source,
          type: record.type, event: "-", index: 0, facet: "-", updatedAt: undefined, first: false, changes: []
        })
      }
      return Stream.fromIterable(list)
    })
  )
  return yield* Effect.scoped(Effect.gen(function*() {
    const writer = yield* Output.open(out)
    let n = 0
    if (options.format === "table") yield* writer.write(`history of ${id} in ${options.tenant} (${source.description})\n`)
    if (options.format === "json") yield* writer.write("[")
    yield* entries.pipe(Stream.runForEachArray((page) => {
      let text = ""
      for (const e of page) {
        if (options.format === "table") text += entryText(e)
        else if (options.format === "ndjson") text += `${Json.stringify(e)}\n`
        else text += `${n === 0 ? "\n" : ",\n"}${Json.stringify(e)}`
        n++
      }
      return writer.write(text)
    }))
    if (options.format === "json") yield* writer.write(n === 0 ? "]\n" : "\n]\n")
    if (options.format === "table") yield* writer.write(`(${n} event${n === 1 ? "" : "s"})\n`)
    return n
  }))
})
