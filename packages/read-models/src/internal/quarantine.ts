/**
 * The quarantine table (`quarantined_records`): records the projection read but did not apply
 * because its tenant predicate refused their business (not registered yet). Nothing is lost:
 * the log keeps the records; this table only remembers which offsets to project again once
 * the business is accepted. Synchronous statements: they run inside the projection's
 * transaction, so a batch's checkpoint never moves past a record that is neither applied nor
 * remembered here.
 */
import type Database from "better-sqlite3"
import type * as V from "../Views.ts"

export interface QuarantineRecord {
  readonly offset: number
  readonly appId: string
  readonly businessId: string | null
  readonly type: string
  readonly receivedAt: number
}

const MAX_LIMIT = 1000

export const make = (client: Database.Database) => {
  const insert = client.prepare<[number, string, string, string, number]>(
    "INSERT OR IGNORE INTO quarantined_records (offset, app_id, business_id, type, received_at) VALUES (?, ?, ?, ?, ?)"
  )
  const tenants = client.prepare<[{ appId: string | null }], V.QuarantinedTenant>(
    `SELECT app_id AS appId, business_id AS businessId, count(*) AS records, min(offset) AS firstOffset,
       max(offset) AS lastOffset, max(received_at) AS lastReceivedAt
     FROM quarantined_records WHERE (@appId IS NULL OR app_id = @appId)
     GROUP BY app_id, business_id ORDER BY app_id, business_id`
  )
  const latest = client.prepare<[{ appId: string | null; limit: number }], V.QuarantinedRecord>(
    `SELECT app_id AS appId, business_id AS businessId, offset, type, received_at AS receivedAt
     FROM quarantined_records WHERE (@appId IS NULL OR app_id = @appId) ORDER BY offset DESC LIMIT @limit`
  )
  const offsets = client.prepare<[string, string], number>(
    "SELECT offset FROM quarantined_records WHERE app_id = ? AND business_id = ? ORDER BY offset"
  ).pluck()
  const remove = client.prepare<[number]>("DELETE FROM quarantined_records WHERE offset = ?")

  return {
    /** Remembers a refused record (a redelivery keeps the first entry). */
    add: (record: QuarantineRecord): void =>
      void insert.run(record.offset, record.appId, record.businessId ?? "", record.type, record.receivedAt),
    list: (options?: V.QuarantineQuery): V.Quarantine => {
      const appId = options?.appId ?? null
      const limit = Math.min(Math.max(1, Math.trunc(options?.limit ?? 100)), MAX_LIMIT)
      return { tenants: tenants.all({ appId }), latest: latest.all({ appId, limit }) }
    },
    /** The quarantined offsets of one business, in log order. */
    offsets: (tenant: V.Tenant): ReadonlyArray<number> => offsets.all(tenant.appId, tenant.businessId),
    remove: (offset: number): void => void remove.run(offset)
  }
}

export type Quarantine = ReturnType<typeof make>
