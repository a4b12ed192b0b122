/**
 * Flags shared by the commands, and the parsers behind them. Syntax errors (a bad tenant, a
 * date that is not one) are reported by the CLI parser itself, so they exit 2 with the usage.
 */
import type { LogRecord } from "@ocs/event-log"
import { Option } from "effect"
import { Flag } from "effect/cli"
import * as NodePath from "node:path"

/** `appId:businessId`, digits (`appId:` addresses application-level records). */
export const parseTenant = (text: string): LogRecord.TenantKey => {
  const trimmed = text.trim()
  if (!/^[0-9]+:[0-9]*$/.test(trimmed)) {
    throw new Error(`"${text}" is not a tenant: use appId:businessId (digits), e.g. 1001:42`)
  }
  return trimmed as LogRecord.TenantKey
}

/** ISO 8601 (`2024-05-01`, `2024-05-01T12:00:00Z`, no zone = UTC) or epoch milliseconds. */
export const parseInstant = (text: string): number => {
  const trimmed = text.trim()
  if (/^[0-9]{10,}$/.test(trimmed)) return Number(trimmed)
  const iso = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(trimmed)
  if (iso !== null) {
    // No zone means UTC (as the read models read updatedAt).
    const withZone = iso[1] !== undefined && iso[4] === undefined ? `${trimmed.replace(" ", "T")}Z` : trimmed.replace(" ", "T")
    const ms = Date.parse(withZone)
    if (Number.isFinite(ms)) return ms
  }
  throw new Error(`"${text}" is not a date: use ISO 8601 (2024-05-01, 2024-05-01T12:00:00Z) or epoch milliseconds`)
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error))

export const tenant = Flag.String("tenant").pipe(
  Flag.withMetavar("appId:businessId"),
  Flag.withDescription("Only this tenant, e.g. 1001:42 (default: all tenants)"),
  Flag.mapTryCatch(parseTenant, message),
  Flag.optional
)

export const instant = (name: string, description: string) =>
  Flag.String(name).pipe(
    Flag.withMetavar("date"),
    Flag.withDescription(`${description} (ISO 8601, e.g. 2024-05-01T12:00:00Z, or epoch ms)`),
    Flag.mapTryCatch(parseInstant, message),
    Flag.optional
  )

export const untilOffset = Flag.Int("until-offset").pipe(
  Flag.withDescription("Point in time: records up to this log offset (inclusive)"),
  Flag.filterMap((n) => (n >= 0 ? Option.some(n) : Option.none()), (n) => `--until-offset must be >= 0, got ${n}`),
  Flag.optional
)

/** Default log file: $OCS_DATA_DIR/events.sqlite, else the demo's `.ocs-data/demo/events.sqlite`. */
export const defaultLogFile = (): string => {
  const dir = process.env["OCS_DATA_DIR"]
  return dir !== undefined && dir !== "" ? NodePath.join(dir, "events.sqlite") : NodePath.join(".ocs-data", "demo", "events.sqlite")
}

/** Where the log is: a SQLite file (default) or a Kafka topic. */
export const source = {
  log: Flag.String("log").pipe(
    Flag.withMetavar("path"),
    Flag.withDescription(`SQLite event-log file (default $OCS_DATA_DIR/events.sqlite, else .ocs-data/demo/events.sqlite)`),
    Flag.optional
  ),
  kafkaBrokers: Flag.String("kafka-brokers").pipe(
    Flag.withMetavar("host:port,..."),
    Flag.withDescription("Read the log from Kafka instead (read-only, from the beginning of --topic)"),
    Flag.optional
  ),
  topic: Flag.String("topic").pipe(Flag.withDescription("Kafka topic of the event log (with --kafka-brokers)"), Flag.optional)
}

export const LogSources = ["webhook", "sync", "system"] as const

/** Filters of `audit` and `export` (log records). */
export const recordFilters = {
  tenant,
  type: Flag.String("type").pipe(
    Flag.withDescription("Only this record type, e.g. productUpdate or product/list.page (repeatable)"),
    Flag.atLeast(0)
  ),
  entity: Flag.String("entity").pipe(
    Flag.withMetavar("id"),
    Flag.withDescription("Only records that touched this entity (product, order, payment, document id)"),
    Flag.optional
  ),
  source: Flag.Literals("source", LogSources).pipe(
    Flag.withDescription("Only records from this source (repeatable)"),
    Flag.atLeast(0)
  ),
  from: instant("from", "Only records received at or after this instant"),
  to: instant("to", "Only records received at or before this instant"),
  untilOffset,
  limit: Flag.Int("limit").pipe(
    Flag.withDescription("At most this many records"),
    Flag.filterMap((n) => (n > 0 ? Option.some(n) : Option.none()), (n) => `--limit must be > 0, got ${n}`),
    Flag.optional
  )
}

export const out = (description: string) => Flag.String("out").pipe(Flag.withMetavar("path"), Flag.withDescription(description), Flag.optional)
