/**
 * `GET /admin/tenants/:appId/:businessId/history/:entityId?limit=`: every log record of the
 * tenant that touched one entity (a product, an order, a bill, a customer...), oldest first,
 * each with its exact stored body (docs/architecture.md §4.1) and the domain events it gave
 * for that entity. The same matching as the replay tool's `history` (apps/replay): a record
 * names the entity in its `entityId`, or one of its decoded events is about it; stock levels
 * count as touching their product.
 *
 * The tenant's records are read in log order, page by page; only the last `limit` matches
 * (1..1000, default 200) are kept, so memory stays bounded on a long history.
 */
import { Effect, Option, Stream } from "effect"
import type { HttpRouter } from "effect/http"
import { EventLog, type LogRecord } from "@ocs/event-log"
import { DomainEvent, Ids } from "@ocs/protocol"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { type AdminOptions, existingTenant, guard, json, pathParam, problem, queryInt, searchParams } from "./AdminHttp.ts"

/** The events of `record` about entity `id`, as `Tag` or `Tag@depot` for stock levels. */
export const eventsAbout = (record: LogRecord.LogRecord, id: string): ReadonlyArray<string> => {
  if (record.source === "system") return record.entityId === id ? [record.type] : []
  const out: Array<string> = []
  for (const event of DomainEvent.decode(record)) {
    if (event._tag === "InventoryChanged" || event._tag === "InventoryObserved") {
      for (const level of event.items) {
        if (level.productId === id) out.push(`${event._tag}@${level.depotId === "" ? "-" : level.depotId}`)
      }
      continue
    }
    const eid = DomainEvent.entityId(event)
    if (Option.isSome(eid) && eid.value === id) out.push(event._tag)
  }
  if (out.length === 0 && record.entityId === id) out.push(record.type)
  return out
}

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    const log = yield* EventLog.EventLog
    const admin = guard(options)
    yield* router.add(
      "GET",
      "/admin/tenants/:appId/:businessId/history/:entityId",
      admin(Effect.gen(function*() {
        const t = yield* existingTenant(store)
        const raw = yield* pathParam("entityId")
        const id = Ids.normalize(raw.trim())
        if (id === undefined) return problem(400, `entityId must be a positive integer, got ${JSON.stringify(raw.slice(0, 40))}`)
        const limit = (yield* queryInt(yield* searchParams, "limit", { min: 1, max: 1000 })) ?? 200
        const kept: Array<{ offset: number; id: string; receivedAt: number; source: string; type: string; events: ReadonlyArray<string>; body: string }> = []
        let matched = 0
        yield* log.read({ tenant: `${t.appId}:${t.businessId}` }).pipe(
          Stream.runForEach((record) =>
            Effect.sync(() => {
              const events = eventsAbout(record, id as string)
              if (events.length === 0) return
              matched++
              kept.push({ offset: record.offset, id: record.id, receivedAt: record.receivedAt, source: record.source, type: record.type, events, body: record.body })
              if (kept.length > limit) kept.shift()
            })
          )
        )
        return json({ appId: t.appId, businessId: t.businessId, entityId: id, matched, records: kept })
      }))
    )
  })
