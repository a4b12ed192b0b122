/**
 * The webhook receiver: `POST <basePath>/<appId>`, verified, stored durably in the event log,
 * then answered 200 (DESIGN section 6). Decoding, projection and plugins read the log later.
 *
 * Three ways to run it, all over one `Ingestion` service:
 * - `routes`: an effect/http `HttpRouter` layer, for the sync server's router;
 * - `nodeListener` on the service: a plain `node:http` request listener (the fast path);
 * - `serve`: a standalone HTTP or HTTPS server (certificate and key files).
 */
import { Context, Effect, Layer, Option, Schema, Stream, type Scope } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { EventLog } from "@ocs/event-log"
import * as NodeFs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"
import * as IngestionMetrics from "./IngestionMetrics.ts"
import { type Answer, type Head, make as makeReceiver, type Receiver } from "./internal/receiver.ts"
import { readBody } from "./internal/nodeBody.ts"
import * as SourceAddresses from "./SourceAddresses.ts"
import type { WebhookApps } from "./WebhookApps.ts"

export type { Answer } from "./internal/receiver.ts"

export interface Options {
  /** Path prefix; deliveries go to `${basePath}/<appId>`. Default `/webhooks`. */
  readonly basePath?: `/${string}` | undefined
  /** Larger bodies are answered 413 and not read further. Default 1 MiB. */
  readonly maxBodyBytes?: number | undefined
  /** An append not durable within this time is answered 503 (the service redelivers). Default 10 s. */
  readonly storeTimeoutMillis?: number | undefined
  /**
   * Source-address allowlist (spec: Delivery rules 6). `false` (default): off, the verify token
   * alone authenticates (local use, the simulator). `true`: the spec's addresses. A list:
   * exactly those addresses / CIDR ranges. Can be changed at run time (`setSourceAllowlist`).
   */
  readonly sourceAllowlist?: boolean | ReadonlyArray<string> | undefined
  /** Proxies whose `X-Forwarded-For` is believed (addresses or CIDR ranges). Default none. */
  readonly trustedProxies?: ReadonlyArray<string> | undefined
}

/** An address list entry is neither an IP address nor a CIDR range. */
export class InvalidAddressList extends Schema.TaggedError<InvalidAddressList>()("InvalidAddressList", {
  message: Schema.String
}) {}

/** The standalone server could not start (port in use, unreadable certificate, ...). */
export class ServeError extends Schema.TaggedError<ServeError>()("ServeError", {
  message: Schema.String,
  cause: Schema.Defect()
}) {}

export interface IngestionService {
  readonly basePath: string
  /** True when `url` belongs to the receiver (so a plain Node server can dispatch to it). */
  readonly isWebhookPath: (url: string) => boolean
  /** A `node:http` / `node:https` request listener answering every webhook request. */
  readonly nodeListener: (req: Http.IncomingMessage, res: Http.ServerResponse) => void
  /** The effect/http handler of the current request (what `routes` mounts). */
  readonly handle: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse>
  readonly metrics: Effect.Effect<IngestionMetrics.Snapshot>
  /** Prometheus text lines for the sync server's `/metrics`. */
  readonly prometheus: Effect.Effect<string>
  /** Replaces the allowlist (`undefined` or `false`: off, `true`: the spec's list). */
  readonly setSourceAllowlist: (list: boolean | ReadonlyArray<string> | undefined) => Effect.Effect<void, InvalidAddressList>
  readonly setTrustedProxies: (list: ReadonlyArray<string>) => Effect.Effect<void, InvalidAddressList>
}

export class Ingestion extends Context.Service<Ingestion, IngestionService>()("@ocs/ingestion/Ingestion") {
  static readonly layer = (options: Options = {}): Layer.Layer<Ingestion, InvalidAddressList, EventLog.EventLog | WebhookApps> =>
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

const firstHeader = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

export const make = Effect.fnUntraced(function*(options: Options = {}) {
  const basePath = options.basePath ?? "/webhooks"
  const receiver = yield* makeReceiver({
    basePath,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    storeTimeoutMillis: options.storeTimeoutMillis ?? 10_000,
    sourceAllowlist: yield* allowlist(options.sourceAllowlist),
    trustedProxies: options.trustedProxies === undefined ? undefined : yield* list(options.trustedProxies)
  })
  return Ingestion.of({
    basePath,
    isWebhookPath: (url) => url === basePath || url.startsWith(`${basePath}/`) || url.startsWith(`${basePath}?`),
    nodeListener: nodeListener(receiver),
    handle: effectHandler(receiver),
    metrics: Effect.sync(() => receiver.metrics.snapshot()),
    prometheus: Effect.sync(() => IngestionMetrics.toPrometheus(receiver.metrics.snapshot())),
    setSourceAllowlist: (value) => Effect.map(allowlist(value), (sourceAllowlist) => receiver.update({ sourceAllowlist })),
    setTrustedProxies: (entries) =>
      Effect.map(list(entries), (trustedProxies) => receiver.update({ trustedProxies }))
  })
})

// ---------------------------------------------------------------------------------------------
// node:http listener
// ---------------------------------------------------------------------------------------------

const STORE_DEFECT: Answer = {
  status: 503,
  outcome: "store_failed",
  body: `{"ok":false,"error":"store_failed","message":"internal error; deliver again"}`,
  headers: { "retry-after": "1" },
  close: false
}

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
    const answer = (a: Answer) => {
      writeAnswer(res, a)
      metrics.answered(a.outcome, performance.now() - started)
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
    readBody(req, receiver.config().maxBodyBytes, (body) => {
      if (body._tag === "TooLarge") return answer(receiver.tooLarge())
      // The sender went away mid-body: there is nobody to answer and nothing complete to store.
      if (body._tag === "Aborted") return
      receiver.ingestUnsafe({
        appId: pre.appId,
        source: pre.source,
        bytes: body.bytes,
        authorization: req.headers.authorization,
        userAgent: req.headers["user-agent"],
        forwardedFor: head.forwardedFor
      }, answer)
    })
  }
}

// ---------------------------------------------------------------------------------------------
// effect/http handler and router layer
// ---------------------------------------------------------------------------------------------

class BodyTooLarge extends Schema.TaggedError<BodyTooLarge>()("BodyTooLarge", {}) {}

const toResponse = (a: Answer) =>
  HttpServerResponse.text(a.body, {
    status: a.status,
    contentType: "application/json; charset=utf-8",
    headers: { "cache-control": "no-store", ...a.headers }
  })

const effectHandler = (receiver: Receiver) => (request: HttpServerRequest.HttpServerRequest) =>
  Effect.suspend(() => {
    const started = performance.now()
    const metrics = receiver.metrics
    metrics.received()
    const answer = (a: Answer) => {
      metrics.answered(a.outcome, performance.now() - started)
      return toResponse(a)
    }
    const forwardedFor = joinHeader(request.headers["x-forwarded-for"])
    const pre = receiver.preflight({
      method: request.method,
      url: request.url,
      peer: Option.getOrElse(request.peerAddress, () => Option.getOrElse(request.remoteAddress, () => "")),
      forwardedFor,
      contentLength: firstHeader(request.headers["content-length"])
    })
    if (pre._tag === "Reject") return Effect.succeed(answer(pre.answer))
    const limit = receiver.config().maxBodyBytes
    const chunks: Array<Uint8Array> = []
    let size = 0
    return request.stream.pipe(
      Stream.runForEach((chunk) => {
        size += chunk.length
        if (size > limit) return Effect.fail(new BodyTooLarge())
        chunks.push(chunk)
        return Effect.void
      }),
      Effect.matchEffect({
        onFailure: (e) =>
          e._tag === "BodyTooLarge"
            ? Effect.succeed(answer(receiver.tooLarge()))
            // The request body stream broke: the sender is gone.
            : Effect.succeed(answer(STORE_DEFECT)),
        onSuccess: () =>
          Effect.map(
            receiver.ingest({
              appId: pre.appId,
              source: pre.source,
              bytes: Buffer.concat(chunks, size),
              authorization: firstHeader(request.headers["authorization"]),
              userAgent: firstHeader(request.headers["user-agent"]),
              forwardedFor
            }),
            answer
          )
      })
    )
  })

/**
 * The receiver as effect/http routes: every method on `${basePath}` and below goes to the
 * receiver, which itself insists on exact paths (the router would forgive a trailing slash).
 *
 * ```ts
 * HttpRouter.serve(Layer.mergeAll(SyncRoutes, Ingestion.routes)).pipe(
 *   Layer.provide(Ingestion.layer({ sourceAllowlist: true })), ...)
 * ```
 */
export const routes: Layer.Layer<never, never, HttpRouter.HttpRouter | Ingestion> = HttpRouter.use((router) =>
  Effect.flatMap(Ingestion, (ingestion) =>
    router.add("*", `${ingestion.basePath}/*` as `/${string}`, ingestion.handle))
)

// ---------------------------------------------------------------------------------------------
// Standalone server
// ---------------------------------------------------------------------------------------------

export interface ServeOptions {
  /** Default `127.0.0.1`; use `0.0.0.0` (or `::`) to take deliveries from the network. */
  readonly host?: string | undefined
  /** 0 picks a free port (see the returned `port`). */
  readonly port: number
  /** spec: Authentication 8: the callback URL must be https. Without `tls`, run behind a TLS proxy. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string } | undefined
  /** Whole-request time limit (slow senders). Default 30 s. */
  readonly requestTimeoutMillis?: number | undefined
  /** Default 65 s, above common proxies' idle timeouts. */
  readonly keepAliveTimeoutMillis?: number | undefined
}

export interface RunningServer {
  readonly url: string
  readonly host: string
  readonly port: number
  readonly server: Http.Server | Https.Server
}

/**
 * Runs the receiver on its own HTTP or HTTPS server for the lifetime of the scope. Every path
 * is the receiver's: unknown paths are answered 404, never redirected.
 */
export const serve = (options: ServeOptions): Effect.Effect<RunningServer, ServeError, Ingestion | Scope.Scope> =>
  Effect.gen(function*() {
    const ingestion = yield* Ingestion
    const tls = options.tls
    const credentials = tls === undefined ? undefined : yield* Effect.try({
      try: () => ({ cert: NodeFs.readFileSync(tls.certFile), key: NodeFs.readFileSync(tls.keyFile) }),
      catch: (cause) => new ServeError({ message: `cannot read the TLS certificate or key: ${String(cause)}`, cause })
    })
    const serverOptions: Http.ServerOptions = {
      requestTimeout: options.requestTimeoutMillis ?? 30_000,
      headersTimeout: Math.min(options.requestTimeoutMillis ?? 30_000, 20_000),
      keepAliveTimeout: options.keepAliveTimeoutMillis ?? 65_000,
      maxHeaderSize: 16 * 1024
    }
    const host = options.host ?? "127.0.0.1"
    return yield* Effect.acquireRelease(
      Effect.callback<RunningServer, ServeError>((resume) => {
        const server = credentials === undefined
          ? Http.createServer(serverOptions, ingestion.nodeListener)
          : Https.createServer({ ...serverOptions, ...credentials }, ingestion.nodeListener)
        const onError = (cause: Error) =>
          resume(Effect.fail(new ServeError({ message: `cannot listen on ${host}:${options.port}: ${cause.message}`, cause })))
        server.once("error", onError)
        server.listen(options.port, host, () => {
          server.removeListener("error", onError)
          const port = (server.address() as Net.AddressInfo).port
          const shown = host.includes(":") ? `[${host}]` : host
          resume(Effect.succeed({ url: `${credentials === undefined ? "http" : "https"}://${shown}:${port}`, host, port, server }))
        })
      }),
      ({ server }) =>
        Effect.callback<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    )
  })

/** `serve` as a layer (the server lives as long as the layer). */
export const layerServer = (options: ServeOptions): Layer.Layer<never, ServeError, Ingestion> =>
  Layer.effectDiscard(serve(options))
