/**
 * The write path's admin routes (docs/architecture.md §4.31), under a tenant:
 *
 * - `POST .../commands` with an `Idempotency-Key` header and `{ "kind", "payload" }`: 201 with
 *   the new command, 200 with the existing one when the key and payload repeat, 400 naming
 *   each field at fault, 409 naming the command a reused key belongs to;
 * - `GET .../commands` (`state`, `kind`, `flagged`, `limit`), with the tenant's counts by state
 *   and its flagged ones (the console's figures), `GET .../commands/:id`;
 * - `GET .../commands/:id/ledger`: the command's transitions from the log (each attempt, each
 *   answer's exact body, the evidence of a doubt) and the request its kind sends;
 * - `POST .../commands/:id/retry` and `.../mark-done` (`{ entityId?, note? }`): a person's
 *   decision on an in-doubt command;
 * - `POST .../commands/:id/cancel`: withdraws a command not sent yet (409 once it was sent);
 * - `GET .../id-map/products` and `.../id-map/orders` (`key`, `id`, repeated or comma-separated;
 *   else `limit`, `after`): the application's keys (appProductId, appOrderId) and the service's
 *   ids, from the copy.
 */
import { Command, CommandEngine } from "@ocs/commands"
import { EventLog } from "@ocs/event-log"
import { CommandKind, EngineRecordCommands } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { Effect, Option, Schema, Stream } from "effect"
import { type HttpRouter, HttpServerRequest } from "effect/http"
import { type AdminOptions, body, existingTenant, guard, json, pageParams, pathParam, problem, queryBool, queryInt, queryText, searchParams } from "./AdminHttp.ts"

const T = "/admin/tenants/:appId/:businessId/commands"
const MAX_BODY_BYTES = 256 * 1024
const ID_MAPS = { products: "product", orders: "order" } as const
/** Keys or ids looked up in one request at most. */
const MAX_LOOKUPS = 1000
const STATES = ["pending", "sending", "inDoubt", "confirmed", "failed", "cancelled"] as const

export const CommandBody = Schema.Struct({ kind: Schema.String, payload: Schema.Unknown })
export const DecisionBody = Schema.Struct({ entityId: Schema.optionalKey(Schema.String), note: Schema.optionalKey(Schema.String) })

/** A command as the API shows it (its tenant is the path's). */
const view = (c: Command.Command) => {
  const { tenant: _tenant, ...rest } = c
  return rest
}

/** Who asks: the admin key, or a console session standing for it. */
const requester = Effect.map(HttpServerRequest.HttpServerRequest, (r): Command.Requester =>
  r.headers["x-admin-key"] !== undefined || r.headers["authorization"] !== undefined ? { type: "admin" } : { type: "console" })

const decider = Effect.map(requester, (r) => r.type)

/** A tenant's commands counted by state, and the confirmed ones whose effect the service does not show. */
export const counts = (all: ReadonlyArray<Command.Command>) => {
  const byState = Object.fromEntries(STATES.map((s) => [s, 0])) as Record<(typeof STATES)[number], number>
  let flagged = 0
  for (const c of all) {
    byState[c.state]++
    if (c.seen === "flagged") flagged++
  }
  return { byState, flagged }
}

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const engine = yield* CommandEngine.CommandEngine
    const store = yield* TenantRegistry
    const readModels = yield* ReadModels.ReadModels
    const log = yield* EventLog.EventLog
    const admin = guard(options)
    const tenantOf = Effect.map(existingTenant(store), (b) => ({ appId: b.appId, businessId: b.businessId }))
    const refusal = (e: Command.CommandNotFound | Command.NotInDoubt | Command.NotCancellable | { readonly _tag: string; readonly message: string }) =>
      e._tag === "CommandNotFound"
        ? problem(404, e.message)
        : e._tag === "NotInDoubt" || e._tag === "NotCancellable"
        ? problem(409, e.message)
        : problem(500, "internal error; see the server log")

    yield* router.add("POST", T, admin(Effect.gen(function*() {
      const tenant = yield* tenantOf
      const request = yield* HttpServerRequest.HttpServerRequest
      const key = request.headers["idempotency-key"]
      if (key === undefined || key === "" || key.length > 200) {
        return problem(400, "an Idempotency-Key header (1..200 characters) is required")
      }
      const input = yield* body(CommandBody, MAX_BODY_BYTES)
      const result = yield* engine.submit({ tenant, kind: input.kind, payload: input.payload, requestedBy: yield* requester, idempotencyKey: key }).pipe(Effect.result)
      if (result._tag === "Success") return json(view(result.success.command), result.success.created ? 201 : 200)
      const e = result.failure
      switch (e._tag) {
        case "InvalidCommand":
          return json({ error: e.message, issues: e.issues }, 400)
        case "IdempotencyKeyReused":
          return json({ error: e.message, commandId: e.commandId }, 409)
        case "PreconditionFailed":
          return json({ error: e.message, issues: [{ path: e.path, message: e.message }] }, 422)
        case "NotGranted":
          // The grant lacks the permission or the depot (docs/architecture.md §4.32): named, nothing stored.
          return json({
            error: e.message,
            ...(e.permission === undefined ? {} : { permission: e.permission }),
            ...(e.depotId === undefined ? {} : { depotId: e.depotId }),
            issues: [{ path: e.path, message: e.message }]
          }, 403)
        default:
          return yield* Effect.fail(e)
      }
    })))

    yield* router.add("GET", T, admin(Effect.gen(function*() {
      const tenant = yield* tenantOf
      const params = yield* searchParams
      const state = yield* queryText(params, "state", 20)
      if (state !== undefined && !(STATES as ReadonlyArray<string>).includes(state)) return problem(400, `state must be one of ${STATES.join(", ")}`)
      const kind = yield* queryText(params, "kind", 60)
      const flagged = yield* queryBool(params, "flagged")
      const limit = (yield* queryInt(params, "limit", { min: 1, max: 1000 })) ?? 100
      const every = yield* engine.list(tenant)
      const all = every.filter((c) =>
        (state === undefined || c.state === state) && (kind === undefined || c.kind === kind) && (flagged === undefined || (c.seen === "flagged") === flagged)
      )
      return json({ items: all.slice(0, limit).map(view), total: all.length, counts: counts(every) })
    })))

    yield* router.add("GET", `${T}/:id`, admin(Effect.gen(function*() {
      const tenant = yield* tenantOf
      const found = yield* engine.get(tenant, yield* pathParam("id"))
      return Option.isSome(found) ? json(view(found.value)) : problem(404, "no such command for this tenant")
    })))

    yield* router.add("GET", `${T}/:id/ledger`, admin(Effect.gen(function*() {
      const tenant = yield* tenantOf
      const id = yield* pathParam("id")
      const found = yield* engine.get(tenant, id)
      if (Option.isNone(found)) return problem(404, "no such command for this tenant")
      const command = found.value
      const transitions: Array<EngineRecordCommands.Transition & { readonly offset: number; readonly at: number }> = []
      yield* log.read({ tenant: `${tenant.appId}:${tenant.businessId}`, types: [EngineRecordCommands.COMMAND_TYPE] }).pipe(
        Stream.runForEach((r) =>
          Effect.sync(() => {
            if (r.entityId !== id) return
            const t = EngineRecordCommands.decodeText(r.body)
            if (Option.isSome(t) && t.value.command === id) transitions.push({ ...t.value, offset: r.offset, at: r.receivedAt })
          })
        )
      )
      const kind = CommandKind.find(command.kind)
      const request = kind === undefined ? null : { operation: kind.operation.path, body: kind.body(command.payload, command.marker) }
      return json({ command: view(command), request, transitions })
    })))

    yield* router.add("POST", `${T}/:id/retry`, admin(Effect.gen(function*() {
      const tenant = yield* tenantOf
      const by = yield* decider
      const result = yield* engine.retry(tenant, yield* pathParam("id"), by).pipe(Effect.result)
      return result._tag === "Success" ? json(view(result.success)) : refusal(result.failure)
    })))

    yield* router.add("POST", `${T}/:id/cancel`, admin(Effect.gen(function*() {
      const tenant = yield* tenantOf
      const result = yield* engine.cancel(tenant, yield* pathParam("id"), yield* decider).pipe(Effect.result)
      return result._tag === "Success" ? json(view(result.success)) : refusal(result.failure)
    })))

    yield* router.add("POST", `${T}/:id/mark-done`, admin(Effect.gen(function*() {
      const tenant = yield* tenantOf
      const decision = yield* body(DecisionBody, 16 * 1024)
      const result = yield* engine.markDone(tenant, yield* pathParam("id"), { by: yield* decider, ...decision }).pipe(Effect.result)
      return result._tag === "Success" ? json(view(result.success)) : refusal(result.failure)
    })))

    yield* router.add("GET", "/admin/tenants/:appId/:businessId/id-map/:entity", admin(Effect.gen(function*() {
      const tenant = yield* tenantOf
      const name = yield* pathParam("entity")
      if (!Object.hasOwn(ID_MAPS, name)) return problem(404, "id maps: products (appProductId) or orders (appOrderId)")
      const params = yield* searchParams
      const values = (param: string) => params.getAll(param).flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== "")
      const keys = values("key")
      const ids = values("id")
      if (keys.length > MAX_LOOKUPS || ids.length > MAX_LOOKUPS) return problem(400, `at most ${MAX_LOOKUPS} keys and ${MAX_LOOKUPS} ids a request`)
      if ([...keys, ...ids].some((v) => v.length > 255)) return problem(400, "a key or id is longer than 255 characters")
      const page = yield* pageParams(params)
      return json(yield* readModels.idMap(tenant, ID_MAPS[name as keyof typeof ID_MAPS], { ...page, keys, ids }))
    })))
  })
