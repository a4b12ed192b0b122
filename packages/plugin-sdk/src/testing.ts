/**
 * Testing helpers for plugin authors (`@ocs/plugin-sdk/testing`).
 *
 * - `runPlugin(plugin, { events, config })`: runs the handler over events with in-memory
 *   capabilities and returns what it did (HTTP requests, API calls, KV writes, logs) per event.
 *   Nothing leaves the process unless `http: "live"`.
 * - `webhook(event, data)`: the domain events of a webhook body as the service sends it.
 *
 * Nothing here needs a database: the end-to-end harness (a real event log, read models and
 * runtime in a temporary folder) is `@ocs/plugin-runtime/testing`, a devDependency.
 */
import { Effect } from "effect"
import * as NodeCrypto from "node:crypto"
import { DomainEvent, Json } from "@ocs/protocol"
import { type CapturedEffect, emptyQuery, type HttpRequest, type HttpResponse, type Query, type Tenant } from "./Capabilities.ts"
import { type EventReport, makeCaptureRunner } from "./internal/captured.ts"
import { policyOf } from "./internal/execute.ts"
import { type AnyPlugin, checkSdkVersion, decodeConfig } from "./Plugin.ts"
import type { InvalidPluginConfig, SdkVersionMismatch } from "./PluginError.ts"

export type { CapturedEffect, EventReport }

/** The tenant builders use unless told otherwise. */
export const TENANT = { appId: "1001", businessId: "42" } as const

export interface RecordOptions {
  readonly appId?: string | undefined
  readonly businessId?: string | null | undefined
  readonly receivedAt?: number | undefined
  readonly verifyToken?: string | undefined
}

/** A record to append to the event log (the shape of the log's `NewRecord`). */
export interface WebhookRecord {
  readonly appId: string
  readonly businessId: string | null
  readonly source: "webhook"
  readonly type: string
  readonly receivedAt?: number
  readonly body: string
}

/** A webhook record as the ingestion stores it (the body as the service sends it), ready to append. */
export const webhookRecord = (event: string, data: unknown, options: RecordOptions = {}): WebhookRecord => {
  const businessId = options.businessId === undefined ? TENANT.businessId : options.businessId
  return {
    appId: options.appId ?? TENANT.appId,
    businessId,
    source: "webhook",
    type: event,
    ...(options.receivedAt === undefined ? {} : { receivedAt: options.receivedAt }),
    body: Json.stringify({
      event,
      ...(businessId === null ? {} : { businessId: BigInt(businessId) }),
      webhooksVerifyToken: options.verifyToken ?? "verify",
      data
    })
  }
}

/** The domain events of one webhook delivery (e.g. `webhook("orderAdd", { id: 1 })`). */
export const webhook = (event: string, data: unknown, options: RecordOptions & { readonly id?: string | undefined } = {}): ReadonlyArray<DomainEvent.DomainEvent> => {
  const record = webhookRecord(event, data, options)
  return DomainEvent.decode({ ...record, id: options.id ?? NodeCrypto.randomUUID(), receivedAt: options.receivedAt ?? Date.now() })
}

export interface RunOptions {
  /** Raw configuration, decoded with the plugin's schema like the runtime does. */
  readonly config?: unknown
  readonly events: ReadonlyArray<DomainEvent.DomainEvent>
  /** Read-model answers (default: empty). */
  readonly query?: Partial<Query> | undefined
  /** "capture" (default): record HTTP and answer `httpResponse`; "live": record and send. */
  readonly http?: "capture" | "live" | undefined
  readonly httpResponse?: ((request: HttpRequest) => HttpResponse) | undefined
  readonly apiResponse?: RunApiResponse | undefined
  /** Use the plugin's retry policy (with its backoff); default: one attempt per event. */
  readonly retries?: boolean | undefined
  /** Key-value entries each tenant starts with. */
  readonly kv?: Readonly<Record<string, unknown>> | undefined
}

type RunApiResponse = NonNullable<Parameters<typeof makeCaptureRunner>[2]["apiResponse"]>

export interface RunReport {
  readonly events: ReadonlyArray<EventReport>
  /** Every captured effect, in order. */
  readonly effects: ReadonlyArray<CapturedEffect>
  readonly httpRequests: ReadonlyArray<Extract<CapturedEffect, { readonly _tag: "HttpRequest" }>>
  /** The key-value state a tenant ended with (default: the first event's tenant). */
  readonly kv: (tenant?: Tenant) => ReadonlyMap<string, unknown>
}

/** Runs a plugin over events with in-memory capabilities; see `RunOptions`. */
export const runPlugin = Effect.fnUntraced(function*(plugin: AnyPlugin, options: RunOptions): Effect.fn.Return<RunReport, InvalidPluginConfig | SdkVersionMismatch> {
  yield* checkSdkVersion(plugin)
  const config = yield* decodeConfig(plugin, options.config)
  const policy = policyOf(plugin, {})
  const query: Query = { ...emptyQuery, ...options.query }
  const runner = makeCaptureRunner(plugin, config, {
    query: () => query,
    http: options.http,
    httpResponse: options.httpResponse,
    apiResponse: options.apiResponse,
    policy: options.retries === true ? policy : { ...policy, maxAttempts: 1 }
  })
  const tags = new Set<string>(plugin.subscribes)
  const reports: Array<EventReport> = []
  for (const [i, event] of options.events.entries()) {
    if (!tags.has(event._tag)) continue
    const memory = runner.memoryOf(event)
    if (options.kv !== undefined && memory.size === 0) for (const [k, v] of Object.entries(options.kv)) memory.set(k, v)
    reports.push(yield* runner.run(event, i))
  }
  const effects = reports.flatMap((r) => r.effects)
  const first = options.events[0]
  return {
    events: reports,
    effects,
    httpRequests: effects.filter((e): e is Extract<CapturedEffect, { readonly _tag: "HttpRequest" }> => e._tag === "HttpRequest"),
    kv: (tenant) => runner.kvState(tenant ?? (first === undefined ? { appId: TENANT.appId, businessId: TENANT.businessId } : { appId: first.appId, businessId: first.businessId }))
  }
})
