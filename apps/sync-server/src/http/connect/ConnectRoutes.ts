/**
 * Businesses connect themselves (docs/architecture.md §4.32): `GET /connect/<appId>` sends the
 * browser to the service's grant page with a return link to `GET /connect/<appId>/callback`,
 * which carries a signed, expiring, single-use state (@ocs/tenant-store Connect.States). The
 * callback exchanges the access code, registers or updates the business (token, expiry,
 * permissions, depots, pages), releases its quarantined records, starts its first sync in the
 * background, and answers a plain page in a shop owner's words. A refused callback (forged or
 * replayed state, expired code, wrong secret key) is a 4xx page saying why, with a link to try
 * again, and changes nothing.
 *
 * These routes face the internet and need no key: they read no body, their parameters are
 * bounded, and the only state they keep for unauthenticated callers is the bounded set of
 * pending states.
 */
import { Effect, Option, Redacted, Scope } from "effect"
import { type HttpRouter, HttpServerResponse } from "effect/http"
import { EventLog } from "@ocs/event-log"
import { Quarantine, ReadModels } from "@ocs/read-models"
import { Notices } from "@ocs/sync"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { Connect } from "@ocs/tenant-store"
import * as TenantActivity from "@ocs/tenant-store/TenantActivity"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { canonical, now, pathParam, searchParams } from "../admin/AdminHttp.ts"

export interface ConnectOptions {
  readonly posBaseUrl: string
  readonly grantPageUrl: string
  readonly states: Connect.States
  readonly timeoutMs?: number | undefined
}

const HEADERS = {
  "content-security-policy": "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** A plain page: a title, a few sentences, and a link when there is one. */
export const page = (status: number, title: string, lines: ReadonlyArray<string>, link?: { readonly href: string; readonly text: string }) =>
  HttpServerResponse.text(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${
      escape(title)
    }</title></head><body><h1>${escape(title)}</h1>${lines.map((l) => `<p>${escape(l)}</p>`).join("")}${
      link === undefined ? "" : `<p><a id="next" href="${escape(link.href)}">${escape(link.text)}</a></p>`
    }</body></html>`,
    { status, contentType: "text/html; charset=utf-8", headers: HEADERS }
  )

const connectLink = Connect.link

const WHY: Record<Connect.StateRefusal, string> = {
  forged: "This link was not made by this server, so it cannot be used to connect your shop.",
  "other-app": "This link belongs to another application.",
  expired: "This link has expired: connecting has to be finished within half an hour.",
  used: "This link was already used. Each connection link works once."
}

/** What the service's refusal means for the person in front of the page. */
const refusalWords = (errorCode: string): { readonly status: number; readonly lines: ReadonlyArray<string> } => {
  switch (errorCode) {
    case "ERR_INVALID_ACCESS_CODE":
      return { status: 400, lines: ["The permission you gave has expired or was already used (it is valid for 10 minutes, once).", "Nothing was changed. Please start again."] }
    case "ERR_INVALID_SECRET_KEY":
      return { status: 409, lines: ["The service did not accept this application's secret key, so your shop could not be connected.", "Nothing was changed. The operator of this server has to fix the application's settings; then try again."] }
    case "UNREACHABLE":
    case "BAD_ANSWER":
      return { status: 502, lines: ["The service could not be reached to finish connecting your shop.", "Nothing was changed. Please try again in a few minutes."] }
    default:
      return { status: 400, lines: [`The service refused to connect your shop (${errorCode}).`, "Nothing was changed. Please try again."] }
  }
}

export const add = (router: HttpRouter.HttpRouter, options: ConnectOptions) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    const notices = yield* Notices.Notices
    const sync = yield* SyncEngine
    const readModels = yield* ReadModels.ReadModels
    const log = yield* EventLog.EventLog
    // Background work started by a callback ends with the server (its scope), not with the request.
    const scope = yield* Scope.Scope

    /** The application named by the path, with what connecting needs; or the page saying why not. */
    const connectable = Effect.gen(function*() {
      const appId = yield* Effect.mapError(
        Effect.flatMap(pathParam("appId"), (id) => canonical(id, "appId")),
        () => page(404, "Unknown application", ["This link names no application of this server."])
      )
      const app = yield* Effect.orDie(store.app(appId))
      if (Option.isNone(app) || !app.value.enabled) {
        return yield* Effect.fail(page(404, "Unknown application", ["This link names no application of this server."]))
      }
      const { secretKey, publicUrl } = app.value
      if (secretKey === null || publicUrl === null) {
        return yield* Effect.fail(page(409, "Connecting is not set up", [
          "This application cannot connect shops yet: its operator has to give it a secret key and this server's public address."
        ]))
      }
      return { appId, secretKey, publicUrl }
    })

    yield* router.add(
      "GET",
      "/connect/:appId",
      Effect.gen(function*() {
        const { appId, publicUrl } = yield* connectable
        const state = options.states.issue(appId, yield* now)
        const returnLink = `${connectLink(publicUrl, appId)}/callback?state=${encodeURIComponent(state)}`
        const target = new URL(options.grantPageUrl)
        target.searchParams.set("version", "3.0")
        target.searchParams.set("appId", appId)
        target.searchParams.set("returnLink", returnLink)
        return HttpServerResponse.empty({ status: 302, headers: { ...HEADERS, location: target.toString() } })
      }).pipe(Effect.catch((response) => Effect.succeed(response)))
    )

    yield* router.add(
      "GET",
      "/connect/:appId/callback",
      Effect.gen(function*() {
        const { appId, secretKey, publicUrl } = yield* connectable
        const again = { href: connectLink(publicUrl, appId), text: "Try again" }
        const params = yield* searchParams
        const state = params.get("state") ?? ""
        const accessCode = params.get("accessCode") ?? ""
        if (state === "" || accessCode === "" || state.length > 200 || accessCode.length > 512) {
          return page(400, "This link is incomplete", ["The page you came back with is missing what the service sends. Nothing was changed."], again)
        }
        const taken = options.states.take(state, appId, yield* now)
        if (!taken.ok) return page(400, "This link cannot be used", [WHY[taken.why], "Nothing was changed."], again)

        const grant = yield* Effect.result(Connect.exchange({ posBaseUrl: options.posBaseUrl, appId, accessCode, secretKey, timeoutMs: options.timeoutMs }))
        if (grant._tag === "Failure") {
          const words = refusalWords(grant.failure.errorCode)
          yield* Effect.logWarning(`connect: app ${appId}: the code exchange was refused: ${grant.failure.errorCode}`)
          return page(words.status, "Your shop was not connected", words.lines, again)
        }
        const g = grant.success
        const before = yield* Effect.orDie(store.business(appId, g.businessId))
        const at = yield* now
        // Under the grant lock: a token check's write-back never lands on top of this grant.
        yield* TenantActivity.grantLock.withPermit(Effect.orDie(store.upsertBusiness({
          appId,
          businessId: g.businessId,
          accessToken: Redacted.value(g.accessToken),
          permissions: g.permissions,
          depots: g.depots,
          pages: g.pages,
          grantedAt: at,
          expiresAt: g.expiresAt
        })))
        // A new grant starts its expiry warnings afresh.
        yield* Effect.orDie(notices.clearNotices(appId, g.businessId, "expiry-"))
        const released = yield* Quarantine.release({ appId, businessId: g.businessId }).pipe(
          Effect.provideService(ReadModels.ReadModels, readModels),
          Effect.provideService(EventLog.EventLog, log)
        )
        // The first sync and a token check (expiry and scopes as the service now tells them)
        // run in the background: the page answers at once.
        yield* Effect.forkIn(sync.syncTenant(appId, g.businessId), scope)
        yield* Effect.forkIn(
          TenantActivity.checkToken({ posBaseUrl: options.posBaseUrl, timeoutMs: options.timeoutMs }, appId, g.businessId).pipe(
            Effect.provideService(TenantRegistry, store),
            Effect.catch((e) => Effect.logWarning("connect: token check after the grant failed", e))
          ),
          scope
        )
        yield* Effect.logInfo(`connect: app ${appId}: business ${g.businessId} ${Option.isSome(before) ? "granted again" : "connected"} (${g.permissions.length} permissions, ${g.depots.length} depots, ${released} quarantined records released)`)
        const until = new Date(g.expiresAt).toISOString().slice(0, 10)
        return page(200, "Your shop is connected", [
          Option.isSome(before)
            ? `Shop ${g.businessId} was connected again; the new permission replaces the old one.`
            : `Shop ${g.businessId} is now connected. Its data is being copied; this can take a few minutes.`,
          `Permissions given: ${g.permissions.length === 0 ? "none" : g.permissions.join(", ")}. Depots: ${g.depots.length === 0 ? "none" : g.depots.join(", ")}.`,
          `The permission lasts until ${until}; you will be asked to connect again before then.`
        ])
      }).pipe(Effect.catch((response) => Effect.succeed(response)))
    )
  })
