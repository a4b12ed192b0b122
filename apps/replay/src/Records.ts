/**
 * Log records as output rows: the JSON object of `audit --format json|ndjson` and `export`,
 * the CSV columns, and the one-line table row of `audit`.
 */
import type { LogRecord } from "@ocs/event-log"
import { DedupeKey } from "@ocs/ingestion"
import * as Json from "@ocs/protocol/Json"
import * as Output from "./Output.ts"

/**
 * The JSON shape of a record: `meta` as JSON (lossless), `body` as the exact text received.
 * A webhook's dedupe key of the earlier recipe (a digest over the token) is published re-keyed
 * over the stored body, so no export lets anyone test a token guess.
 */
export const toJson = (r: LogRecord.LogRecord) => ({
  offset: r.offset,
  id: r.id,
  tenant: `${r.appId}:${r.businessId ?? ""}`,
  appId: r.appId,
  businessId: r.businessId,
  source: r.source,
  type: r.type,
  receivedAt: Output.iso(r.receivedAt),
  receivedAtMs: r.receivedAt,
  entityId: r.entityId,
  dedupeKey: DedupeKey.rekey(r),
  meta: r.meta,
  body: r.body
})

export const jsonLine = (r: LogRecord.LogRecord): string => `${Json.stringify(toJson(r))}\n`

export const CSV_HEADER = ["offset", "id", "tenant", "app_id", "business_id", "source", "type", "received_at", "received_at_ms", "entity_id", "dedupe_key", "meta", "body"]

export const csvLine = (r: LogRecord.LogRecord): string =>
  Output.csvLine([r.offset, r.id, `${r.appId}:${r.businessId ?? ""}`, r.appId, r.businessId, r.source, r.type, Output.iso(r.receivedAt),
    r.receivedAt, r.entityId, DedupeKey.rekey(r), Json.stringify(r.meta), r.body])

/** Fixed-width columns, so a table streams without knowing every row first. */
const WIDTHS = [8, 24, 25, 7, 24, 20] as const

export const TABLE_HEADER = ["offset", "received_at", "tenant", "source", "type", "entity", "body"]

const row = (values: ReadonlyArray<string>): string =>
  `${values.map((v, i) => (i < WIDTHS.length ? (i === 0 ? v.padStart(WIDTHS[i]!) : v.padEnd(WIDTHS[i]!)) : v)).join("  ").trimEnd()}\n`

export const tableHeader = (): string => row(TABLE_HEADER)

export const tableLine = (r: LogRecord.LogRecord, entity?: string): string =>
  row([
    String(r.offset),
    Output.iso(r.receivedAt),
    Output.cell(`${r.appId}:${r.businessId ?? ""}`, WIDTHS[2]),
    r.source,
    Output.cell(r.type, WIDTHS[4]),
    Output.cell(r.entityId ?? entity ?? "", WIDTHS[5]),
    Output.cell(r.body, 80)
  ])
