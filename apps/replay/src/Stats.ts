/**
 * `stats`: records per tenant, type and day; duplicates dropped (the event log's
 * `dedupe_decisions`); rate-limit locks seen (`transport.LockTaken` system records).
 * SQLite: aggregated in SQL by the event log's `LogFile.stats`. Kafka: aggregated while streaming the topic (memory grows with
 * the number of distinct tenants, types and days, not with the log).
 */
import type { LogRecord } from "@ocs/event-log"
import { Effect, Stream } from "effect"
import { LogSource } from "./LogSource.ts"
import * as Output from "./Output.ts"

export interface Options {
  readonly tenant?: LogRecord.TenantKey | undefined
  readonly fromMs?: number | undefined
  readonly toMs?: number | undefined
}

export interface Stats {
  readonly source: string
  readonly tenant: string
  readonly records: number
  readonly first: string | null
  readonly last: string | null
  readonly byTenant: ReadonlyArray<{ readonly tenant: string; readonly records: number; readonly first: string; readonly last: string }>
  readonly byType: ReadonlyArray<{ readonly source: string; readonly type: string; readonly records: number }>
  readonly byDay: ReadonlyArray<{ readonly day: string; readonly records: number }>
  /** null: not available (Kafka: the decisions live in the writer's outbox). */
  readonly duplicates: {
    readonly total: number
    readonly byTenant: ReadonlyArray<{ readonly tenant: string; readonly type: string; readonly reason: string; readonly count: number }>
  } | null
  readonly locks: {
    readonly total: number
    readonly byTenant: ReadonlyArray<{ readonly tenant: string; readonly operation: string; readonly count: number; readonly last: string }>
  }
}

const LOCK_TYPE = "transport.LockTaken"

const day = (ms: number) => Output.iso(ms).slice(0, 10)

const operationOf = (body: string): string => {
  try {
    const value = JSON.parse(body) as unknown
    const op = typeof value === "object" && value !== null ? (value as Record<string, unknown>)["operation"] : undefined
    return typeof op === "string" ? op : ""
  } catch {
    return ""
  }
}

export const run = Effect.fn("Stats.run")(function*(options: Options) {
  const source = yield* LogSource
  const file = source.file
  const base = { source: source.description, tenant: options.tenant ?? "all" }
  if (file !== undefined) {
    const s = yield* file.stats({ tenant: options.tenant, fromMs: options.fromMs, toMs: options.toMs, operationsOf: LOCK_TYPE })
    const records = s.byTenant.reduce((n, t) => n + t.records, 0)
    return {
      ...base,
      records,
      first: s.byTenant.length === 0 ? null : Output.iso(Math.min(...s.byTenant.map((t) => t.first))),
      last: s.byTenant.length === 0 ? null : Output.iso(Math.max(...s.byTenant.map((t) => t.last))),
      byTenant: s.byTenant.map((t) => ({ tenant: t.tenant, records: t.records, first: Output.iso(t.first), last: Output.iso(t.last) })),
      byType: s.byType,
      byDay: s.byDay,
      duplicates: s.duplicates === undefined ? null : { total: s.duplicates.reduce((n, x) => n + x.count, 0), byTenant: s.duplicates },
      locks: { total: s.operations.reduce((n, x) => n + x.count, 0), byTenant: s.operations.map((l) => ({ ...l, last: Output.iso(l.last) })) }
    } satisfies Stats
  }
  // Kafka: one pass over the topic.
  const tenants = new Map<string, { records: number; first: number; last: number }>()
  const types = new Map<string, { source: string; type: string; records: number }>()
  const days = new Map<string, number>()
  const locks = new Map<string, { tenant: string; operation: string; count: number; last: number }>()
  yield* source.records({ tenant: options.tenant, fromMs: options.fromMs, toMs: options.toMs }).pipe(
    Stream.runForEach((r) => Effect.sync(() => {
      const tenant = `${r.appId}:${r.businessId ?? ""}`
      const t = tenants.get(tenant) ?? { records: 0, first: r.receivedAt, last: r.receivedAt }
      tenants.set(tenant, { records: t.records + 1, first: Math.min(t.first, r.receivedAt), last: Math.max(t.last, r.receivedAt) })
      const typeKey = `${r.source}\u0000${r.type}`
      const ty = types.get(typeKey) ?? { source: r.source, type: r.type, records: 0 }
      types.set(typeKey, { ...ty, records: ty.records + 1 })
      const d = day(r.receivedAt)
      days.set(d, (days.get(d) ?? 0) + 1)
      if (r.source === "system" && r.type === LOCK_TYPE) {
        const operation = operationOf(r.body)
        const key = `${tenant}\u0000${operation}`
        const l = locks.get(key) ?? { tenant, operation, count: 0, last: r.receivedAt }
        locks.set(key, { ...l, count: l.count + 1, last: Math.max(l.last, r.receivedAt) })
      }
    }))
  )
  const byTenant = [...tenants.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const records = byTenant.reduce((n, [, t]) => n + t.records, 0)
  const lockList = [...locks.values()].sort((a, b) => b.count - a.count)
  return {
    ...base,
    records,
    first: byTenant.length === 0 ? null : Output.iso(Math.min(...byTenant.map(([, t]) => t.first))),
    last: byTenant.length === 0 ? null : Output.iso(Math.max(...byTenant.map(([, t]) => t.last))),
    byTenant: byTenant.map(([tenant, t]) => ({ tenant, records: t.records, first: Output.iso(t.first), last: Output.iso(t.last) })),
    byType: [...types.values()].sort((a, b) => b.records - a.records),
    byDay: [...days.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, records]) => ({ day, records })),
    duplicates: null,
    locks: { total: lockList.reduce((n, x) => n + x.count, 0), byTenant: lockList.map((l) => ({ ...l, last: Output.iso(l.last) })) }
  } satisfies Stats
})

export const text = (s: Stats): string => {
  const sections = [
    `stats of ${s.source} (tenant ${s.tenant}): ${s.records} records${s.first === null ? "" : `, ${s.first} .. ${s.last}`}`,
    "",
    "per tenant",
    Output.table(["tenant", "records", "first", "last"], s.byTenant.map((t) => [t.tenant, t.records, t.first, t.last])),
    "",
    "per type",
    Output.table(["source", "type", "records"], s.byType.map((t) => [t.source, t.type, t.records])),
    "",
    "per day (UTC)",
    Output.table(["day", "records"], s.byDay.map((d) => [d.day, d.records])),
    "",
    s.duplicates === null
      ? "duplicates dropped: not available (Kafka: dedupe decisions are kept in the writer's outbox)"
      : `duplicates dropped: ${s.duplicates.total}`,
    ...(s.duplicates !== null && s.duplicates.total > 0
      ? [Output.table(["tenant", "type", "reason", "count"], s.duplicates.byTenant.map((d) => [d.tenant, d.type, d.reason, d.count]))]
      : []),
    "",
    `locks seen (${LOCK_TYPE}): ${s.locks.total}`,
    ...(s.locks.total > 0
      ? [Output.table(["tenant", "operation", "count", "last"], s.locks.byTenant.map((l) => [l.tenant, l.operation, l.count, l.last]))]
      : [])
  ]
  return `${sections.join("\n")}\n`
}
