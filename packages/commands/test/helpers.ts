import { NodeHttpClient } from "@effect/platform-node"
import { type EventLog, SqliteEventLog } from "@ocs/event-log"
import type { RunningSimulator } from "@ocs/simulator"
import { CommerceClient, RateLimiter, RateLimitStore, TransportEvents } from "@ocs/transport"
import { Effect, Layer, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Engine from "../src/CommandEngine.ts"
import { NoAccess } from "../src/Command.ts"
import type * as Grant from "../src/Grant.ts"

export const tempLog = (): string => NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "commands-")), "log.db")

/** The tenants a test created in the simulator, with their tokens. */
export type Tokens = Map<string, string>

/** The grants of the tenants a test connected with scopes (the registry's record of them). */
export type Grants = Map<string, Grant.Grant>

export const tenantsLayer = (tokens: Tokens, grants?: Grants) =>
  Layer.succeed(Engine.CommandTenants, Engine.CommandTenants.of({
    access: (tenant) => {
      const token = tokens.get(`${tenant.appId}:${tenant.businessId}`)
      return token === undefined
        ? Effect.fail(new NoAccess({ ...tenant, message: `no token for ${tenant.appId}:${tenant.businessId}` }))
        : Effect.succeed(CommerceClient.tenantAccess(tenant.appId, tenant.businessId, token))
    },
    ...(grants === undefined ? {} : { grant: (tenant) => Effect.succeed(Option.fromUndefinedOr(grants.get(`${tenant.appId}:${tenant.businessId}`))) })
  }))

/** The real stack: a SQLite log, the scheduler, keep-alive HTTP to the simulator, the engine. */
export const engineLayer = (
  sim: RunningSimulator,
  logFile: string,
  tokens: Tokens,
  options: Engine.Options = {},
  /** What the engine reads of the copy (preconditions); none by default. */
  copy: Layer.Layer<never> | Layer.Layer<Engine.CommandCopy, unknown> = Layer.empty,
  grants?: Grants
): Layer.Layer<Engine.CommandEngine | EventLog.EventLog | CommerceClient.CommerceClient | RateLimiter.RateLimiter, unknown> => {
  const events = TransportEvents.TransportEvents.collect([])
  const limiter = RateLimiter.RateLimiter.layer({ skewAllowanceMs: 250 }).pipe(Layer.provide(RateLimitStore.RateLimitStore.layerMemory), Layer.provide(events))
  const client = CommerceClient.CommerceClient.layer({ posBaseUrl: sim.posBaseUrl, vpageBaseUrl: sim.vpageBaseUrl, timeoutMs: 1500, backoffBaseMs: 20 }).pipe(
    Layer.provideMerge(limiter),
    Layer.provide(events),
    Layer.provide(NodeHttpClient.layerUndici)
  )
  const log = SqliteEventLog.layer({ filename: logFile, synchronous: "NORMAL", pollIntervalMillis: 50 })
  return Engine.CommandEngine.layer({ settleMs: 100, ...options }).pipe(
    Layer.provide(copy),
    Layer.provideMerge(client),
    Layer.provideMerge(log),
    Layer.provide(tenantsLayer(tokens, grants))
  )
}

/**
 * A simulator tenant made with `seed`, its token recorded in `tokens`, and the id of its first
 * product as the service lists it.
 */
export const tenantWithProduct = async (sim: RunningSimulator, tokens: Tokens, seed: Parameters<RunningSimulator["control"]["createTenant"]>[0]) => {
  const t = await sim.control.createTenant(seed)
  const tenant = { appId: String(t.app.appId), businessId: String(t.business.businessId) }
  tokens.set(`${tenant.appId}:${tenant.businessId}`, t.token.accessToken)
  const listed = await fetch(`${sim.posBaseUrl}/v3.0/product/list?appId=${tenant.appId}&businessId=${tenant.businessId}`, {
    method: "POST",
    headers: { Authorization: t.token.accessToken, "Content-Type": "application/json" },
    body: JSON.stringify({ paginator: { size: 1 } })
  })
  const productId = String(((await listed.json()) as { data: Array<{ id: number }> }).data[0]!.id)
  return { tenant, productId }
}
