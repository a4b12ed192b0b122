/** Applications and tenants: register, list, inspect, pause, resume, remove, sync now. */
import { Effect, Option, Schema } from "effect"
import type { HttpRouter } from "effect/http"
import * as Config from "../../boot/Config.ts"
import { Notices, Operations, SyncState } from "@ocs/sync"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { TenantSettings } from "@ocs/sync"
import { Operation } from "@ocs/protocol"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { EventLog } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import * as Quarantine from "../../tenants/Quarantine.ts"
import {
  type AdminOptions,
  body,
  canonical,
  DEFAULT_MAX_BODY_BYTES,
  describeBusiness,
  existingTenant,
  guard,
  json,
  now,
  parseDate,
  pathParam,
  problem,
  queryText,
  searchParams
} from "./AdminHttp.ts"

// The admin API takes what the configuration file takes (same fields, same checks).
const AppInput = Schema.Struct({
  appId: Config.AppConfig.fields.appId,
  verifyTokens: Config.AppConfig.fields.verifyTokens.check(Schema.isMinLength(1)),
  enabled: Schema.optional(Schema.Boolean)
})

const TenantInput = Schema.Struct({ appId: Config.AppConfig.fields.appId, ...Config.BusinessConfig.fields })

/** Every resource a tenant's settings name must resolve; the 400 names the path at fault. */
const checkResources = (settings: TenantSettings.TenantSettings, prefix: string) =>
  Effect.gen(function*() {
    for (const [i, name] of (settings.resources ?? []).entries()) {
      const failed = yield* Effect.flip(Operations.resolve([name], [])).pipe(Effect.option)
      if (Option.isSome(failed)) return problem(400, `invalid body: ${prefix}resources[${i}]: ${failed.value.message}`)
    }
    return undefined
  })

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    const syncState = yield* SyncState.SyncStateStore
    const notices = yield* Notices.Notices
    const sync = yield* SyncEngine
    const readModels = yield* ReadModels.ReadModels
    const log = yield* EventLog.EventLog
    const admin = guard(options)
    const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
    const existing = existingTenant(store)

    yield* router.add("GET", "/admin/apps", admin(Effect.map(store.apps(), (apps) => json({ apps }))))
    yield* router.add(
      "POST",
      "/admin/apps",
      admin(Effect.gen(function*() {
        const input = yield* body(AppInput, maxBody)
        const appId = yield* canonical(input.appId, "appId")
        yield* store.upsertApp(appId, input.verifyTokens, input.enabled ?? true)
        return json({ appId, verifyTokens: input.verifyTokens.length, enabled: input.enabled ?? true }, 201)
      }))
    )
    yield* router.add(
      "DELETE",
      "/admin/apps/:appId",
      admin(Effect.gen(function*() {
        const appId = yield* canonical(yield* pathParam("appId"), "appId")
        return (yield* store.removeApp(appId)) ? json({ removed: appId }) : problem(404, `no application ${appId}`)
      }))
    )

    yield* router.add(
      "GET",
      "/admin/tenants",
      admin(Effect.gen(function*() {
        const params = yield* searchParams
        const status = params.get("status")
        if (status !== null && status !== "active" && status !== "paused" && status !== "attention") {
          return problem(400, `status must be active, paused or attention`)
        }
        const appIdText = yield* queryText(params, "appId", 40)
        const appId = appIdText === undefined ? undefined : yield* canonical(appIdText, "appId")
        const list = yield* store.businesses({ appId, status: status ?? undefined })
        const at = yield* now
        return json({ tenants: list.map((b) => describeBusiness(b, at, options.silenceAlertMs)) })
      }))
    )
    yield* router.add(
      "POST",
      "/admin/tenants",
      admin(Effect.gen(function*() {
        const input = yield* body(TenantInput, maxBody)
        const appId = yield* canonical(input.appId, "appId")
        const businessId = yield* canonical(input.businessId, "businessId")
        if (Option.isNone(yield* store.app(appId))) return problem(409, `application ${appId} does not exist: POST /admin/apps first`)
        const dates = yield* Effect.try({
          try: () => ({ grantedAt: parseDate(input.grantedAt), expiresAt: parseDate(input.expiresAt) }),
          catch: (e) => problem(400, e instanceof Error ? e.message : String(e))
        })
        if (input.settings !== undefined) {
          const unknown = yield* checkResources(input.settings, "settings.")
          if (unknown !== undefined) return unknown
        }
        yield* store.upsertBusiness({ appId, businessId, accessToken: input.accessToken, version: input.version, permissions: input.permissions, depots: input.depots, ...dates })
        if (input.settings !== undefined) yield* store.setSettings(appId, businessId, input.settings)
        yield* notices.clearNotices(appId, businessId, "expiry-")
        // Registered now (the projection accepts its next records): what it sent before is
        // projected from the quarantine, in this request, so the answer already shows it.
        const released = yield* Quarantine.release({ appId, businessId }).pipe(
          Effect.provideService(ReadModels.ReadModels, readModels),
          Effect.provideService(EventLog.EventLog, log)
        )
        const b = yield* store.business(appId, businessId)
        return json({ ...describeBusiness(Option.getOrThrow(b), yield* now, options.silenceAlertMs), released }, 201)
      }))
    )
    yield* router.add(
      "GET",
      "/admin/tenants/:appId/:businessId",
      admin(Effect.gen(function*() {
        const b = yield* existing
        const states = yield* syncState.states(b.appId, b.businessId)
        const counts = yield* readModels.counts(b)
        return json({ ...describeBusiness(b, yield* now, options.silenceAlertMs), sync: states, counts })
      }))
    )
    // Per-tenant sync settings (docs/architecture.md §4.15): resources, intervals, depots.
    yield* router.add(
      "GET",
      "/admin/tenants/:appId/:businessId/settings",
      admin(Effect.gen(function*() {
        const b = yield* existing
        const operations = yield* sync.operationsOf(b).pipe(Effect.orElseSucceed(() => sync.operations))
        return json({ appId: b.appId, businessId: b.businessId, settings: b.settings, resources: operations.map((op) => Operation.resourceKey(op)) })
      }))
    )
    yield* router.add(
      "PUT",
      "/admin/tenants/:appId/:businessId/settings",
      admin(Effect.gen(function*() {
        const b = yield* existing
        // Every field at fault, each with its path; unknown fields are refused, not ignored.
        const settings = yield* body(Schema.Unknown, maxBody).pipe(
          Effect.flatMap((raw) => Effect.mapError(TenantSettings.validate(raw), (e) => problem(400, e.message)))
        )
        const unknown = yield* checkResources(settings, "")
        if (unknown !== undefined) return unknown
        yield* store.setSettings(b.appId, b.businessId, settings)
        const fresh = Option.getOrThrow(yield* store.business(b.appId, b.businessId))
        const operations = yield* sync.operationsOf(fresh).pipe(Effect.orElseSucceed(() => sync.operations))
        return json({ appId: b.appId, businessId: b.businessId, settings, resources: operations.map((op) => Operation.resourceKey(op)) })
      }))
    )
    const setStatus = (status: "paused" | "active") =>
      admin(Effect.gen(function*() {
        const b = yield* existing
        yield* store.setStatus(b.appId, b.businessId, status)
        return json({ appId: b.appId, businessId: b.businessId, status })
      }))
    yield* router.add("POST", "/admin/tenants/:appId/:businessId/pause", setStatus("paused"))
    yield* router.add("POST", "/admin/tenants/:appId/:businessId/resume", setStatus("active"))
    yield* router.add(
      "DELETE",
      "/admin/tenants/:appId/:businessId",
      admin(Effect.gen(function*() {
        const b = yield* existing
        yield* store.removeBusiness(b.appId, b.businessId)
        return json({ removed: `${b.appId}:${b.businessId}` })
      }))
    )
    yield* router.add(
      "POST",
      "/admin/tenants/:appId/:businessId/sync",
      admin(Effect.gen(function*() {
        const b = yield* existing
        const full = (yield* searchParams).get("full")
        if (full !== null && full !== "true" && full !== "false") return problem(400, "full must be true or false")
        const reports = yield* sync.syncTenant(b.appId, b.businessId, { forceFull: full === "true" })
        return json({ reports })
      }))
    )
  })
