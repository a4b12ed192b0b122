/** Applications and tenants: register, list, inspect, pause, resume, remove, sync now. */
import { Effect, Option, Schema } from "effect"
import type { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as StrictKeys from "@ocs/config/StrictKeys"
import { Notices, Operations, SyncState } from "@ocs/sync"
import { Ownership } from "@ocs/sync/Ownership"
import { type RunReport, SyncEngine } from "@ocs/sync/SyncEngine"
import { TenantSettings } from "@ocs/sync"
import type { Business } from "@ocs/tenant-store/TenantRegistry"
import { Operation } from "@ocs/protocol"
import { AppInput, TenantInput } from "@ocs/admin-api/AdminInputs"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { EventLog } from "@ocs/event-log"
import { Quarantine, ReadModels } from "@ocs/read-models"
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
/**
 * A body decoded with `schema`, its unknown fields refused like the configuration's (a
 * misspelt `expiresat` would otherwise be dropped and the tenant get no expiry warnings):
 * 400 naming each with the nearest known field.
 */
const strictBody = <S extends Schema.Top & Schema.Decoder<unknown>>(schema: S, maxBytes: number) =>
  Effect.flatMap(body(Schema.Unknown, maxBytes), (raw) => {
    const unknown = StrictKeys.unknownKeys(schema, raw).map(StrictKeys.describe)
    return unknown.length > 0
      ? Effect.fail(problem(400, `invalid body: ${unknown.join("; ")}`))
      : Effect.mapError(Schema.decodeUnknownEffect(schema)(raw, { errors: "all" }), (e) => problem(400, `invalid body: ${e.message}`))
  }) as Effect.Effect<S["Type"], HttpServerResponse.HttpServerResponse, HttpServerRequest.HttpServerRequest>

/** Every resource a tenant's settings name must resolve; the 400 names the path at fault. */
const checkResources = (settings: TenantSettings.TenantSettings, prefix: string) =>
  Effect.gen(function*() {
    for (const [i, name] of (settings.resources ?? []).entries()) {
      const failed = yield* Effect.flip(Operations.resolve([name], [])).pipe(Effect.option)
      if (Option.isSome(failed)) return problem(400, `invalid body: ${prefix}resources[${i}]: ${failed.value.message}`)
    }
    return undefined
  })

/**
 * What an operator should know about a grant as posted. The API gives an access token with its
 * expiry (`expiredAt`, docs/api-catalogue.md §8); without `expiresAt` the server cannot warn before the
 * token stops working (30, 7 and 1 days ahead), so the tenant would only be put on hold after.
 */
export const grantWarnings = (expiresAt: number | null, at: number): ReadonlyArray<string> =>
  expiresAt === null
    ? ["no expiresAt: the access token's expiry is unknown, so no expiry warnings will be given; post the tenant again with the expiresAt the grant gave"]
    : expiresAt <= at
    ? [`expiresAt ${new Date(expiresAt).toISOString()} is in the past: calls with this token will be refused`]
    : []

/**
 * Why a pass of `POST .../sync` did not run or did not finish, in words; null when it ran.
 * The engine skips a resource of a tenant that is paused or on hold, a resource paused by its
 * own error, a tenant another server owns, and a pass not due yet (`?full=true` forces one).
 */
export const reasonOf = (
  report: RunReport,
  tenant: Business,
  resourcePaused: { readonly code: string; readonly message: string } | null,
  owned: boolean
): string | null => {
  if (report.outcome === "error") return report.error ?? "failed; see GET /admin/errors"
  if (report.outcome === "attention") return `the tenant needs attention: ${tenant.attention?.code ?? "see GET /admin/tenants"}`
  if (report.outcome === "paused") return `the resource is paused: ${resourcePaused?.code ?? "see GET /admin/sync"}`
  if (report.mode !== "skipped") return null
  if (tenant.status === "paused") return "the tenant is paused (POST .../resume)"
  if (tenant.status === "attention") return `the tenant needs attention (${tenant.attention?.code ?? "unknown"}): post a new grant with POST /admin/tenants`
  if (resourcePaused !== null) return `the resource is paused after ${resourcePaused.code}: ${resourcePaused.message}`
  if (!owned) return "another server owns this tenant's pulls (GET /admin/ownership)"
  return "not due: synced within its interval (?full=true forces a full pass)"
}

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    const syncState = yield* SyncState.SyncStateStore
    const notices = yield* Notices.Notices
    const sync = yield* SyncEngine
    const readModels = yield* ReadModels.ReadModels
    const log = yield* EventLog.EventLog
    const ownership = yield* Ownership
    const admin = guard(options)
    const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
    const existing = existingTenant(store)

    yield* router.add("GET", "/admin/apps", admin(Effect.map(store.apps(), (apps) => json({ apps }))))
    yield* router.add(
      "POST",
      "/admin/apps",
      admin(Effect.gen(function*() {
        const input = yield* strictBody(AppInput, maxBody)
        const appId = yield* canonical(input.appId, "appId")
        yield* store.upsertApp(appId, input.verifyTokens, input.enabled ?? true, { secretKey: input.secretKey, publicUrl: input.publicUrl })
        // Counts only: secrets never leave the server.
        return json({ appId, verifyTokens: input.verifyTokens.length, enabled: input.enabled ?? true, secretKey: input.secretKey !== undefined }, 201)
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
        const input = yield* strictBody(TenantInput, maxBody)
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
        yield* store.upsertBusiness({ appId, businessId, accessToken: input.accessToken, version: input.version, permissions: input.permissions, depots: input.depots, pages: input.pages, ...dates })
        if (input.settings !== undefined) yield* store.setSettings(appId, businessId, input.settings)
        yield* notices.clearNotices(appId, businessId, "expiry-")
        // Registered now (the projection accepts its next records): what it sent before is
        // projected from the quarantine, in this request, so the answer already shows it.
        const released = yield* Quarantine.release({ appId, businessId }).pipe(
          Effect.provideService(ReadModels.ReadModels, readModels),
          Effect.provideService(EventLog.EventLog, log)
        )
        const b = yield* store.business(appId, businessId)
        const at = yield* now
        return json({ ...describeBusiness(Option.getOrThrow(b), at, options.silenceAlertMs), released, warnings: grantWarnings(dates.expiresAt, at) }, 201)
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
        // Resources the grant leaves out are not pulled: shown with their fix (connect again).
        const notGranted = yield* sync.notGrantedOf(b).pipe(Effect.orElseSucceed(() => []))
        return json({ appId: b.appId, businessId: b.businessId, settings: b.settings, resources: operations.map((op) => Operation.resourceKey(op)), notGranted })
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
        const operations = yield* sync.operationsOf(b).pipe(Effect.orElseSucceed(() => sync.operations))
        const reports = yield* sync.syncTenant(b.appId, b.businessId, { forceFull: full === "true" })
        // The engine runs the tenant's resources in this order; each answer names its resource
        // and, when it did not run or did not finish, why (read after the run: a resource can
        // put the tenant on hold for those after it).
        const after = Option.getOrElse(yield* store.business(b.appId, b.businessId), () => b)
        const described = yield* Effect.forEach(reports, (report, i) =>
          Effect.gen(function*() {
            const resource = operations[i] === undefined ? null : Operation.resourceKey(operations[i]!)
            const state = resource === null ? undefined : yield* syncState.state(b.appId, b.businessId, resource)
            return { resource, ...report, reason: reasonOf(report, after, state?.paused ?? null, ownership.owns(b.appId, b.businessId)) }
          }))
        return json({ appId: b.appId, businessId: b.businessId, reports: described })
      }))
    )
  })
