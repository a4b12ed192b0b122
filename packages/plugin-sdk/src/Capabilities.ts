/**
 * What a handler may do, as values handed to it (never ambient services): the read-model query
 * API bound to the event's tenant, a logger, a key-value store per plugin and tenant, the
 * commerce API client for the event's tenant, and outbound HTTP. Because they are values, the
 * runtime gives real ones, and dry runs and tests give ones that capture instead of perform.
 */
import { Effect, Option, Result } from "effect"
import { type CommandKind, type DomainEvent, type Operation, Json } from "@ocs/protocol"
import type { ApiError as ServiceError, Warning } from "@ocs/protocol"
import type * as Views from "./Views.ts"
import { type ApiUnavailable, type CommandRefused, HttpError, HttpStatusError, type PluginStoreError, type QueryError } from "./PluginError.ts"

/** The business an event belongs to. `businessId` is null for application-level events. */
export interface Tenant {
  readonly appId: string
  readonly businessId: string | null
}

/** Read-only queries over the read models, always of the event's tenant (there is no tenant argument). */
export interface Query {
  readonly products: (options?: Views.ProductQuery) => Effect.Effect<Views.Page<Views.Product>, QueryError>
  readonly product: (id: string) => Effect.Effect<Option.Option<Views.Product>, QueryError>
  /** Stock levels per product and depot (`depotId` "" for totals). */
  readonly inventory: (options?: Views.InventoryQuery) => Effect.Effect<ReadonlyArray<Views.StockLevel>, QueryError>
  readonly orders: (options?: Views.OrderQuery) => Effect.Effect<Views.Page<Views.Order>, QueryError>
  /** The order with its lines (`items`). */
  readonly order: (id: string) => Effect.Effect<Option.Option<Views.OrderDetail>, QueryError>
  readonly payments: (options?: Views.PaymentQuery) => Effect.Effect<Views.Page<Views.Payment>, QueryError>
  readonly documents: (kind: string, options?: Views.PageOptions) => Effect.Effect<Views.Page<Views.Document>, QueryError>
  readonly document: (kind: string, id: string) => Effect.Effect<Option.Option<Views.Document>, QueryError>
  readonly counts: () => Effect.Effect<Views.Counts, QueryError>
}

export type LogFields = Readonly<Record<string, unknown>>

export interface Logger {
  readonly debug: (message: string, fields?: LogFields) => Effect.Effect<void>
  readonly info: (message: string, fields?: LogFields) => Effect.Effect<void>
  readonly warn: (message: string, fields?: LogFields) => Effect.Effect<void>
  readonly error: (message: string, fields?: LogFields) => Effect.Effect<void>
}

/** Key-value store of this plugin for this tenant; values are JSON (bigints kept exactly). */
export interface KeyValue {
  readonly get: (key: string) => Effect.Effect<Option.Option<unknown>, PluginStoreError>
  readonly set: (key: string, value: unknown) => Effect.Effect<void, PluginStoreError>
  readonly delete: (key: string) => Effect.Effect<void, PluginStoreError>
  /** Entries whose key starts with `prefix` (all when omitted), in key order. */
  readonly list: (prefix?: string) => Effect.Effect<ReadonlyArray<{ readonly key: string; readonly value: unknown }>, PluginStoreError>
}

/** A call the transport could not complete (timeout, connection, 5xx, rate-limit wait too long). */
export interface TransportFailure {
  readonly _tag: "RequestTimeout" | "ConnectionFailed" | "ServerError" | "LockWaitExceeded"
  readonly message: string
}

/** What a failed API call gives the handler; handle by `_tag`. */
export type ApiError = ServiceError.ApiError | ServiceError.MalformedResponse | TransportFailure | ApiUnavailable

export interface ApiResult<A> {
  readonly data: A
  readonly warnings: ReadonlyArray<Warning.Warning>
  /** The response body exactly as received. */
  readonly text: string
}

/** The commerce API for the event's tenant, inside its rate-limit budget (interactive priority). */
export interface Api {
  readonly call: <Item>(operation: Operation.Operation<Item>, body: unknown) => Effect.Effect<ApiResult<unknown>, ApiError>
}

/** Where a command stands (docs/architecture.md §4.31). */
export interface CommandOutcome {
  readonly id: string
  readonly kind: CommandKind.KindName
  /** `inDoubt`: its answer was lost and reading back could not tell; a person decides. */
  readonly state: "pending" | "sending" | "inDoubt" | "confirmed" | "failed" | "cancelled"
  /** The service's id of what it created or changed, once known. */
  readonly entityId: string | undefined
  readonly reason: { readonly tag: string; readonly code?: string; readonly message: string } | undefined
}

/**
 * Changes on the service for the event's tenant, with exactly one effect: each command is keyed
 * by the event's id and `key` (default: the kind), so a redelivered event asks for the same
 * command again and gets its outcome, never a second effect. Waits for the outcome.
 *
 * `businessId` sends to another business of the same application (stock kept equal between two
 * shops, an application-level event acting on one business); it must be connected to this
 * application, else `CommandRefused` (`Unavailable`) with nothing stored.
 */
export interface Commands {
  readonly send: <K extends CommandKind.KindName>(
    kind: K,
    payload: CommandKind.Payloads[K],
    options?: { readonly key?: string | undefined; readonly businessId?: string | undefined }
  ) => Effect.Effect<CommandOutcome, CommandRefused>
}

export interface HttpRequest {
  readonly url: string
  /** Default "POST" when a body is given, else "GET". */
  readonly method?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly body?: string | undefined
  /** Default: the runtime's `http.timeoutMillis` (10 s). */
  readonly timeoutMillis?: number | undefined
  /** Answer statuses >= 400 as responses instead of `HttpStatusError`. */
  readonly allowErrorStatus?: boolean | undefined
}

export interface HttpResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface Http {
  readonly request: (request: HttpRequest) => Effect.Effect<HttpResponse, HttpError | HttpStatusError>
  /** POST `value` as JSON (lossless: bigints are written digit for digit). */
  readonly postJson: (
    url: string,
    value: unknown,
    options?: Omit<HttpRequest, "url" | "method" | "body">
  ) => Effect.Effect<HttpResponse, HttpError | HttpStatusError>
}

/** Everything a handler receives beside its event. */
export interface PluginContext<Config> {
  readonly plugin: { readonly name: string; readonly version: string }
  /** The domain event's id (`<record id>:<index>`): stable across redeliveries, for idempotency. */
  readonly eventId: string
  readonly tenant: Tenant
  readonly config: Config
  /** 1 for the first delivery attempt of this event in this process. */
  readonly attempt: number
  /** True in dry runs and tests that capture effects. */
  readonly dryRun: boolean
  readonly query: Query
  readonly log: Logger
  readonly kv: KeyValue
  readonly api: Api
  readonly http: Http
  readonly commands: Commands
}

/** A side effect a dry run or a test captured instead of performing. */
export type CapturedEffect =
  | { readonly _tag: "HttpRequest"; readonly method: string; readonly url: string; readonly headers: Readonly<Record<string, string>>; readonly body: string | undefined }
  | { readonly _tag: "ApiCall"; readonly operation: string; readonly body: unknown }
  | { readonly _tag: "Command"; readonly kind: string; readonly key: string; readonly payload: unknown; readonly businessId?: string | undefined }
  | { readonly _tag: "KvSet"; readonly key: string; readonly value: unknown }
  | { readonly _tag: "KvDelete"; readonly key: string }
  | { readonly _tag: "Log"; readonly level: "debug" | "info" | "warn" | "error"; readonly message: string; readonly fields: LogFields }

// ---------------------------------------------------------------------------------------------
// Real implementations
// ---------------------------------------------------------------------------------------------

const emptyPage = { items: [], next: undefined }
/** Queries over nothing: for tests and dry runs without read models. */
export const emptyQuery: Query = {
  products: () => Effect.succeed(emptyPage),
  product: () => Effect.succeed(Option.none()),
  inventory: () => Effect.succeed([]),
  orders: () => Effect.succeed(emptyPage),
  order: () => Effect.succeed(Option.none()),
  payments: () => Effect.succeed(emptyPage),
  documents: () => Effect.succeed(emptyPage),
  document: () => Effect.succeed(Option.none()),
  counts: () =>
    Effect.succeed({
      products: 0, deletedProducts: 0, inventory: 0, orders: 0, deletedOrders: 0, bills: 0, deletedBills: 0,
      customers: 0, depots: 0, categories: 0, brands: 0, payments: 0, documents: 0, unknownEvents: 0
    })
}

/** Logs through Effect's logger, annotated with plugin, event id and tenant. */
export const effectLogger = (annotations: LogFields): Logger => {
  const at = (f: (message: string) => Effect.Effect<void>) => (message: string, fields?: LogFields) =>
    f(message).pipe(Effect.annotateLogs({ ...annotations, ...fields }))
  return {
    debug: at((m) => Effect.logDebug(m)),
    info: at((m) => Effect.logInfo(m)),
    warn: at((m) => Effect.logWarning(m)),
    error: at((m) => Effect.logError(m))
  }
}

export interface HttpOptions {
  /** Default per-request timeout (10 s). */
  readonly timeoutMillis?: number | undefined
  /** Which URLs a plugin may call (default: any, loopback included). */
  readonly allow?: ((url: URL) => boolean) | undefined
  /** The fetch to use (default: the global one). */
  readonly fetch?: typeof globalThis.fetch | undefined
}

const methodOf = (r: HttpRequest) => (r.method ?? (r.body === undefined ? "GET" : "POST")).toUpperCase()

/** Outbound HTTP through fetch, with a timeout, interruptible. */
export const fetchHttp = (options: HttpOptions = {}): Http => {
  const doFetch = options.fetch ?? globalThis.fetch
  const request = (r: HttpRequest): Effect.Effect<HttpResponse, HttpError | HttpStatusError> =>
    Effect.gen(function*() {
      let url: URL
      try {
        url = new URL(r.url)
      } catch {
        return yield* new HttpError({ url: r.url, reason: "Network", message: `not a URL: ${r.url}` })
      }
      if (options.allow !== undefined && !options.allow(url)) {
        return yield* new HttpError({ url: r.url, reason: "NotAllowed", message: `outbound HTTP to ${url.origin} is not allowed` })
      }
      const timeoutMillis = r.timeoutMillis ?? options.timeoutMillis ?? 10_000
      const response = yield* Effect.tryPromise({
        try: async (signal) => {
          const res = await doFetch(url, {
            method: methodOf(r),
            ...(r.headers === undefined ? {} : { headers: { ...r.headers } }),
            ...(r.body === undefined ? {} : { body: r.body }),
            redirect: "manual",
            signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMillis)])
          })
          const body = await res.text()
          return { status: res.status, headers: Object.fromEntries(res.headers.entries()), body } satisfies HttpResponse
        },
        catch: (cause) => {
          const timedOut = cause instanceof Error && (cause.name === "TimeoutError" || cause.name === "AbortError")
          return new HttpError({
            url: r.url,
            reason: timedOut ? "Timeout" : "Network",
            message: timedOut ? `${methodOf(r)} ${r.url}: no answer within ${timeoutMillis} ms` : `${methodOf(r)} ${r.url}: ${String((cause as Error)?.cause ?? cause)}`
          })
        }
      })
      if (response.status >= 400 && r.allowErrorStatus !== true) {
        return yield* new HttpStatusError({ url: r.url, status: response.status, body: response.body.slice(0, 500), message: `${methodOf(r)} ${r.url} answered ${response.status}` })
      }
      return response
    })
  return { request, postJson: (url, value, o) => request({ ...o, url, method: "POST", body: Json.stringify(value), headers: { "content-type": "application/json", ...o?.headers } }) }
}

// ---------------------------------------------------------------------------------------------
// Capturing implementations (dry run, tests)
// ---------------------------------------------------------------------------------------------

export interface Capture {
  readonly effects: Array<CapturedEffect>
}

export const capturingLogger = (capture: Capture, echo?: Logger): Logger => {
  const at = (level: "debug" | "info" | "warn" | "error") => (message: string, fields?: LogFields) =>
    Effect.andThen(
      Effect.sync(() => capture.effects.push({ _tag: "Log", level, message, fields: fields ?? {} })),
      echo === undefined ? Effect.void : echo[level](message, fields)
    )
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") }
}

/** Records each request and answers it with `respond` (default: 200, empty body). */
export const capturingHttp = (capture: Capture, respond?: (request: HttpRequest) => HttpResponse): Http => {
  const request = (r: HttpRequest) =>
    Effect.sync(() => {
      capture.effects.push({ _tag: "HttpRequest", method: methodOf(r), url: r.url, headers: r.headers ?? {}, body: r.body })
      return respond?.(r) ?? { status: 200, headers: {}, body: "" }
    })
  return { request, postJson: (url, value, o) => request({ ...o, url, method: "POST", body: Json.stringify(value), headers: { "content-type": "application/json", ...o?.headers } }) }
}

/** Records each call and answers it with `respond` (default: data null). */
export const capturingApi = (capture: Capture, respond?: (operation: Operation.Operation<unknown>, body: unknown) => unknown): Api => ({
  call: (operation, body) =>
    Effect.sync(() => {
      capture.effects.push({ _tag: "ApiCall", operation: `${operation.family}:${operation.path}`, body })
      const data = respond?.(operation as Operation.Operation<unknown>, body) ?? null
      return { data, warnings: [], text: Json.stringify({ code: 1, data }) }
    })
})

/** Records each command instead of sending it, answered `pending` (nothing was stored or sent). */
export const capturingCommands = (capture: Capture): Commands => ({
  send: (kind, payload, options) =>
    Effect.sync(() => {
      const key = options?.key ?? kind
      // Another business of the application, when the plugin named one.
      capture.effects.push({ _tag: "Command", kind, key, payload, ...(options?.businessId === undefined ? {} : { businessId: options.businessId }) })
      return { id: `captured:${capture.effects.length}`, kind, state: "pending", entityId: undefined, reason: undefined }
    })
})

/**
 * An in-memory key-value store that records writes. `base` (optional) is read through for keys
 * not written yet, so a dry run sees the real state without changing it.
 */
export const capturingKv = (capture: Capture, memory: Map<string, unknown>, base?: KeyValue): KeyValue => {
  const DELETED = Symbol("deleted")
  const local = memory as Map<string, unknown>
  return {
    get: (key) =>
      local.has(key)
        ? Effect.succeed(local.get(key) === DELETED ? Option.none() : Option.some(local.get(key)))
        : base === undefined ? Effect.succeed(Option.none()) : base.get(key),
    set: (key, value) =>
      Effect.sync(() => {
        // Stored as it would be on disk (JSON round trip), so tests see what the runtime would.
        const stored = Json.parse(Json.stringify(value))
        local.set(key, Result.isSuccess(stored) ? stored.success : value)
        capture.effects.push({ _tag: "KvSet", key, value })
      }),
    delete: (key) =>
      Effect.sync(() => {
        local.set(key, DELETED)
        capture.effects.push({ _tag: "KvDelete", key })
      }),
    list: (prefix = "") =>
      Effect.gen(function*() {
        const merged = new Map<string, unknown>()
        if (base !== undefined) for (const e of yield* base.list(prefix)) merged.set(e.key, e.value)
        for (const [k, v] of local) if (k.startsWith(prefix)) merged.set(k, v)
        return [...merged].filter(([, v]) => v !== DELETED).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, value]) => ({ key, value }))
      })
  }
}

/** The tenant of an event. */
export const tenantOf = (event: DomainEvent.DomainEvent): Tenant => ({ appId: event.appId, businessId: event.businessId })
