/**
 * Quarantine release into PostgreSQL (docs/architecture.md §4.29, §4.34): records of a business
 * the tenant predicate refused are remembered in the schema's `quarantined_records` (as in the
 * SQLite file); once the business is registered, `release` reads them from the log and projects
 * them, forgetting each in the transaction that applies it, as `ReadModels.release` does for the
 * file: in log order, no checkpoint moves, the same rules, so both copies end the same.
 */
import { EventLog } from "@ocs/event-log"
import { Ids } from "@ocs/protocol"
import { Effect, Stream } from "effect"
import type { ApplyStats, PostgresStore } from "./PostgresStore.ts"

/** Projects the business's quarantined records; returns what was applied. */
export const release = (
  store: Pick<PostgresStore, "project" | "query">,
  tenant: Ids.TenantRef,
  batchSize = 2000
) =>
  Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    const rows = yield* store.query<{ offset: number }>(
      `SELECT "offset" FROM quarantined_records WHERE app_id = $1 AND business_id = $2 ORDER BY "offset"`,
      [tenant.appId, tenant.businessId]
    )
    let total: ApplyStats = { records: 0, events: 0, statements: 0, quarantined: 0, changes: 0 }
    if (rows.length === 0) return total
    const wanted = new Set(rows.map((row) => row.offset))
    // One read over the span of the business's quarantined offsets (its own records only).
    yield* log.read({ tenant: Ids.tenantKey(tenant), from: rows[0]!.offset, untilOffset: rows[rows.length - 1]!.offset, pageSize: batchSize }).pipe(
      Stream.filter((record) => wanted.has(record.offset)),
      Stream.rechunk(batchSize),
      Stream.runForEachArray((page) =>
        Effect.map(store.project(page, undefined, { released: true }), (s) => {
          total = {
            records: total.records + s.records,
            events: total.events + s.events,
            statements: total.statements + s.statements,
            quarantined: 0,
            changes: total.changes + s.changes
          }
        })
      )
    )
    return total
  })
