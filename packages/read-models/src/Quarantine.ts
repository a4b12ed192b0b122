/**
 * Quarantine of webhooks for businesses that are not registered (docs/architecture.md §4.29).
 *
 * Ingestion stores every webhook of a registered application, whatever business it names, so
 * nothing is lost; but the projection applies a record only when its business is registered
 * (the tenant store's `isRegistered`, asked per record). Records of other businesses are quarantined
 * in the read-models file, listed by `GET /admin/quarantine`, and projected from the log when
 * the business registers: at once through `POST /admin/tenants`, and at start for businesses
 * registered while the server was down (configuration seeding included).
 */
import { Effect } from "effect"
import type { Ids } from "@ocs/protocol"
import type { EventLog } from "@ocs/event-log"
import * as ReadModels from "./ReadModels.ts"

export type Tenant = Ids.TenantRef

/**
 * Projects the business's quarantined records; returns how many were applied. A failure is
 * logged and leaves them quarantined (the next start releases them again): registering the
 * business has already succeeded and must not be undone by it.
 */
export const release = (tenant: Tenant): Effect.Effect<number, never, ReadModels.ReadModels | EventLog.EventLog> =>
  Effect.gen(function*() {
    const readModels = yield* ReadModels.ReadModels
    const stats = yield* readModels.release(tenant)
    if (stats.records > 0) {
      yield* Effect.logInfo(`released ${stats.records} quarantined record(s) of ${tenant.appId}:${tenant.businessId}`)
    }
    return stats.records
  }).pipe(
    Effect.catch((e) =>
      Effect.logError(`could not release the quarantined records of ${tenant.appId}:${tenant.businessId}; they stay quarantined`, e).pipe(
        Effect.as(0)
      )
    )
  )

/** Releases every quarantined business that is registered now (the tenant store answers). */
export const releaseRegistered = (isRegistered: (appId: string, businessId: string) => boolean) => Effect.gen(function*() {
  const readModels = yield* ReadModels.ReadModels
  const { tenants } = yield* readModels.quarantine({ limit: 1 })
  for (const t of tenants) {
    if (isRegistered(t.appId, t.businessId)) yield* release(t)
  }
}).pipe(Effect.catch((e) => Effect.logError("could not list the quarantined records", e)))
