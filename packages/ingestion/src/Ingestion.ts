/**
 * The webhook receiver: `POST <basePath>/<appId>`, verified, stored durably in the event log,
 * then answered 200 (docs/architecture.md, section 6). Decoding, projection and plugins read
 * the log later.
 *
 * One way in: `nodeListener`, a `node:http` / `node:https` request listener that reads the
 * body, decides and appends in plain callbacks (no fiber per request) through the log's
 * `DirectAppend`. Mount it in your own server, next to your other routes, with
 * `isWebhookPath` to dispatch (the sync server does exactly that).
 */
import type { DirectAppend } from "@ocs/event-log"
import { Context, Effect, Layer, Metric, Schema, type Tracer } from "effect"
import { PrometheusMetrics } from "effect/observability"
import type * as Http from "node:http"
import * as IngestionMetrics from "./IngestionMetrics.ts"
import * as AuthFailures from "./internal/authFailures.ts"
import * as Unverified from "./internal/unverified.ts"
import { type Answer, type Head, make as makeReceiver, type Receiver, type StoreHealth } from "./internal/receiver.ts"
import { readBody } from "./internal/nodeBody.ts"
import * as SourceAddresses from "./SourceAddresses.ts"
import type { WebhookApps } from "./WebhookApps.ts"

export type { Answer, StoreHealth } from "./internal/receiver.ts"

export interface Options {
  /** Path prefix; deliveries go to `${basePath}/<appId>`. Default `/webhooks`. */
  readonly basePath?: `/${string}` | undefined
  /** Larger bodies are answered 413 and not read further. Default 1 MiB. */
  readonly maxBodyBytes?: number | undefined
  /** An append not durable within this time is answered 503 (the service redelivers). Default 10 s. */
  readonly storeTimeoutMillis?: number | undefined
  /**
   * Source-address allowlist (docs/api-catalogue.md, Delivery rules 6). `false` (default): off, the verify token
   * alone authenticates (local use, the simulator). `true`: the API reference's addresses. A list:
   * exactly those addresses / CIDR ranges. Can be changed at run time (`setSourceAllowlist`).
   */
  readonly sourceAllowlist?: boolean | ReadonlyArray<string> | undefined
  /** Proxies whose `X-Forwarded-For` is believed (addresses or CIDR ranges). Default none. */
  readonly trustedProxies?: ReadonlyArray<string> | undefined
  /**
   * Sources (per appId and client address) whose deliveries failed the verify-token check
   * `limit` times within `windowSeconds` are answered 429 with `Retry-After`, their bodies not
   * read, until that window ends. Default 20 in 60 s; `false`: off.
   */
  readonly authFailures?: { readonly limit: number; readonly windowSeconds: number } | false | undefined
  /**
   * Bytes of request bodies that have not proved a verify token, held at once by all
   * connections together; a body that would pass it is answered 503 with `retry-after` and its
   * connection closed. A token in `Authorization`, or found by the top-level scan as the body
   * arrives, takes the body out of the budget. Default 16 MiB; 0: no bound.
   */
  readonly unverifiedBodyBudgetBytes?: number | undefined
}

/** An address list entry is neither an IP address nor a CIDR range. */
export class InvalidAddressList extends Schema.TaggedError<InvalidAddressList>()("InvalidAddressList", {
  message: Schema.String
}) {}

export interface IngestionService {
  readonly basePath: string
  /** True when `url` belongs to the receiver (so a plain Node server can dispatch to it). */
  readonly isWebhookPath: (url: string) => boolean
  /**
   * A `node:http` / `node:https` request listener answering every webhook request: give it
   * the requests for which `isWebhookPath(req.url)` holds (it answers 404 to any other path).
   */
  readonly nodeListener: (req: Http.IncomingMessage, res: Http.ServerResponse) => void
  readonly metrics: Effect.Effect<IngestionMetrics.Snapshot>
  /** Prometheus text lines for the sync server's `/metrics`. */
  readonly prometheus: Effect.Effect<string>
  /** Replaces the allowlist (`undefined` or `false`: off, `true`: the API reference's list). */
  readonly setSourceAllowlist: (list: boolean | ReadonlyArray<string> | undefined) => Effect.Effect<void, InvalidAddressList>
  readonly setTrustedProxies: (list: ReadonlyArray<string>) => Effect.Effect<void, InvalidAddressList>
  /** Bytes of request bodies held now that have not proved a verify token (see `unverifiedBodyBudgetBytes`). */
  readonly unverifiedBytes: () => number
  /**
   * How the server should count a connection from `peer` against per-source caps: `"own"`,
   * by the peer itself; `"forwarded"`, a trusted proxy, by the client its `X-Forwarded-For`
   * names (`sourceOf`); `"exempt"`, an allowlisted delivery source. Follows the settings as
   * they change at run time.
   */
  readonly peerKind: (peer: string) => "own" | "forwarded" | "exempt"
  /**
   * Whether a webhook sent now would be stored: failing from the first append that failed or
   * timed out (full disk, stalled store) until the next one that succeeds. For readiness.
   */
  readonly storeHealth: () => StoreHealth
  /** The source of a request as the receiver judges it (the trusted proxies' client). */
  readonly sourceOf: (peer: string, forwardedFor: string | undefined) => SourceAddresses.Source
}

export class Ingestion extends Context.Service<Ingestion, IngestionService>()("@ocs/ingestion/Ingestion") {
  /** The receiver; it appends through `DirectAppend` (provided by the event log layers). */
  static readonly layer = (options: Options = {}): Layer.Layer<Ingestion, InvalidAddressList, DirectAppend.DirectAppend | WebhookApps> =>
    Layer.effect(Ingestion, make(options))
}

const list = (entries: ReadonlyArray<string>) =>
  Effect.try({
    try: () => SourceAddresses.makeList(entries),
    catch: (e) => new InvalidAddressList({ message: e instanceof Error ? e.message : String(e) })
  })

const allowlist = (value: boolean | ReadonlyArray<string> | undefined) =>
  value === undefined || value === false
    ? Effect.succeed(undefined)
    : list(value === true ? SourceAddresses.specList : value)

/** Several header lines of a list-valued header, as one comma-separated value. */
const joinHeader = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.join(", ")

export const make = Effect.fnUntraced(function*(options: Options = {}) {
  const basePath = options.basePath ?? "/webhooks"
  // The receiver counts into the metric registry it is given (the server's, exported on its
  // /metrics); without one, into a registry of its own, so that two receivers in one
  // process never share counters.
  const outer = yield* Effect.context<never>()
  const context = outer.mapUnsafe.has(Metric.MetricRegistry.key) ? outer : Context.add(outer, Metric.MetricRegistry, new Map())
  const receiver = yield* Effect.provideContext(makeReceiver({
    basePath,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    storeTimeoutMillis: options.storeTimeoutMillis ?? 10_000,
    sourceAllowlist: yield* allowlist(options.sourceAllowlist),
    trustedProxies: options.trustedProxies === undefined ? undefined : yield* list(options.trustedProxies),
    authFailures: options.authFailures === false
      ? { ...AuthFailures.defaults, limit: 0 }
      : options.authFailures === undefined
      ? AuthFailures.defaults
      : { ...AuthFailures.defaults, limit: options.authFailures.limit, windowMillis: options.authFailures.windowSeconds * 1000 },
    unverified: { ...Unverified.defaults, budgetBytes: options.unverifiedBodyBudgetBytes ?? Unverified.defaults.budgetBytes }
  }), context)
  return Ingestion.of({
    basePath,
    isWebhookPath: (url) => url === basePath || url.startsWith(`${basePath}/`) || url.startsWith(`${basePath}?`),
    nodeListener: nodeListener(receiver),
    metrics: Effect.sync(() => receiver.metrics.snapshot()),
    // The registry the receiver counts into (the server's, when it provides one).
    prometheus: Effect.sync(() => PrometheusMetrics.formatUnsafe(context)),
    setSourceAllowlist: (value) => Effect.map(allowlist(value), (sourceAllowlist) => receiver.update({ sourceAllowlist })),
    setTrustedProxies: (entries) =>
      Effect.map(list(entries), (trustedProxies) => receiver.update({ trustedProxies })),
    unverifiedBytes: receiver.unverifiedBytes,
    storeHealth: receiver.storeHealth,
    peerKind: (peer) => {
      const c = receiver.config()
      if (c.sourceAllowlist?.has(peer) === true) return "exempt"
      return c.trustedProxies?.has(peer) === true ? "forwarded" : "own"
    },
    sourceOf: (peer, forwardedFor) => SourceAddresses.resolve(peer, forwardedFor, receiver.config().trustedProxies)
  })
})

// ---------------------------------------------------------------------------------------------
// node:http listener
// ---------------------------------------------------------------------------------------------

/** The full header set of each answer, built once per answer value (most are constants). */
const headersOf = new WeakMap<Answer, Http.OutgoingHttpHeaders>()

const writeAnswer = (res: Http.ServerResponse, answer: Answer): void => {
  if (res.headersSent || res.destroyed) return
  let headers = headersOf.get(answer)
  if (headers === undefined) {
    headers = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...answer.headers }
    headersOf.set(answer, headers)
  }
  res.writeHead(answer.status, headers)
  res.end(answer.body)
}

const nodeListener = (receiver: Receiver) => {
  const metrics = receiver.metrics
  return (req: Http.IncomingMessage, res: Http.ServerResponse): void => {
    const started = performance.now()
    metrics.received()
    let appId: string | undefined
    let span: Tracer.Span | undefined
    const answer = (a: Answer) => {
      writeAnswer(res, a)
      metrics.answered(a.outcome, performance.now() - started, appId)
      if (span !== undefined) receiver.endSpan(span, a)
    }
    const head: Head = {
      method: req.method ?? "",
      url: req.url ?? "/",
      peer: req.socket.remoteAddress ?? "",
      forwardedFor: joinHeader(req.headers["x-forwarded-for"]),
      contentLength: req.headers["content-length"]
    }
    const pre = receiver.preflight(head)
    if (pre._tag === "Reject") return answer(pre.answer)
    appId = pre.appId
    // Before any byte of the body: the application, and the token of the header when there is one.
    const gate = receiver.gate(pre.appId, pre.source, req.headers.authorization)
    if (gate._tag === "Reject") return answer(gate.answer)
    span = receiver.startSpan(pre.appId)
    const watch = gate._tag === "Verified" ? undefined : receiver.watch(pre.appId, pre.source, gate)
    readBody(req, receiver.config().maxBodyBytes, watch, (body) => {
      if (body._tag === "TooLarge") return answer(receiver.tooLarge())
      if (body._tag === "Stopped") return answer(body.answer)
      // The sender went away mid-body: there is nobody to answer and nothing complete to store.
      if (body._tag === "Aborted") return
      receiver.ingest({
        appId: pre.appId,
        source: pre.source,
        bytes: body.bytes,
        authorization: req.headers.authorization,
        userAgent: req.headers["user-agent"],
        forwardedFor: head.forwardedFor,
        span
      }, answer)
    })
  }
}
