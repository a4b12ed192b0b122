/**
 * The server-independent part of the webhook receiver: the checks on the request head, and
 * the callback path that turns a delivery's bytes into a durable record and an answer. The
 * Node request listener (../Ingestion.ts) drives it.
 */
import { DirectAppend, type LogRecord, TraceContext } from "@ocs/event-log"
import { Json, Webhook } from "@ocs/protocol"
import { Cause, Clock, Context, Effect, Exit, Option, Predicate, Result, Tracer } from "effect"
import * as DedupeKey from "../DedupeKey.ts"
import type { RejectReason } from "../IngestionMetrics.ts"
import * as IngestionMetrics from "../IngestionMetrics.ts"
import * as SourceAddresses from "../SourceAddresses.ts"
import { type WebhookApp, WebhookApps } from "../WebhookApps.ts"
import * as AuthFailures from "./authFailures.ts"
import type { Watch } from "./nodeBody.ts"
import * as Envelope from "./envelope.ts"
import * as TokenField from "./tokenField.ts"
import * as Unverified from "./unverified.ts"
import * as VerifyToken from "./verifyToken.ts"

export interface Config {
  readonly basePath: string
  readonly maxBodyBytes: number
  readonly storeTimeoutMillis: number
  readonly sourceAllowlist: SourceAddresses.AddressList | undefined
  readonly trustedProxies: SourceAddresses.AddressList | undefined
  readonly authFailures: AuthFailures.Settings
  readonly unverified: Unverified.Settings
}

export type Outcome = "accepted" | "duplicate" | RejectReason

/** An HTTP answer, independent of the server that writes it. */
export interface Answer {
  readonly status: number
  readonly outcome: Outcome
  /** JSON text. */
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
  /** Close the connection after answering (the rest of an oversized body is not read). */
  readonly close: boolean
}

const reject = (
  status: number,
  outcome: RejectReason,
  message: string,
  headers: Readonly<Record<string, string>> = {},
  close = false
): Answer => ({
  status,
  outcome,
  body: JSON.stringify({ ok: false, error: outcome, message }),
  headers,
  close
})

const VERIFIED: Gate = { _tag: "Verified" }
const APPS_UNAVAILABLE = reject(503, "apps_unavailable", "application lookup failed; deliver again", { "retry-after": "1" })
const UNKNOWN_APP = reject(404, "unknown_app", "unknown application")

const ACCEPTED: Answer = { status: 200, outcome: "accepted", body: `{"ok":true}`, headers: {}, close: false }
const DUPLICATE: Answer = { status: 200, outcome: "duplicate", body: `{"ok":true,"duplicate":true}`, headers: {}, close: false }

export interface Head {
  readonly method: string
  readonly url: string
  readonly peer: string
  readonly forwardedFor: string | undefined
  readonly contentLength: string | undefined
}

export type Preflight =
  | { readonly _tag: "Reject"; readonly answer: Answer }
  | { readonly _tag: "Continue"; readonly appId: string; readonly source: SourceAddresses.Source }

/**
 * What is known once the head is read, before any byte of the body: the application, and the
 * `Authorization` token when the request carries one.
 */
export type Gate =
  | { readonly _tag: "Reject"; readonly answer: Answer }
  /** The header's token is right: the body is read outside the unverified budget. */
  | { readonly _tag: "Verified" }
  /** No header token: the body is read within the budget until the scan finds the token. */
  | { readonly _tag: "Unverified"; readonly app: WebhookApp; readonly throttled: boolean }

/**
 * The latest appends' verdict: failing from the first append that failed or timed out until
 * the next one that succeeds.
 */
export interface StoreHealth {
  readonly failing: boolean
  /** Appends failed or timed out in a row. */
  readonly failures: number
  /** When the first of them failed (epoch ms), or null. */
  readonly since: number | null
}

export interface Delivery {
  readonly appId: string
  readonly source: SourceAddresses.Source
  readonly bytes: Uint8Array
  readonly authorization: string | undefined
  readonly userAgent: string | undefined
  readonly forwardedFor: string | undefined
  /** The delivery's server span, when tracing is on (see `startSpan`). */
  readonly span?: Tracer.Span | undefined
}

export interface Receiver {
  readonly config: () => Config
  readonly update: (change: Partial<Pick<Config, "sourceAllowlist" | "trustedProxies">>) => void
  readonly metrics: IngestionMetrics.Recorder
  readonly authFailures: AuthFailures.AuthFailures
  /** Path, method, source address and declared length: everything decidable before the body. */
  readonly preflight: (head: Head) => Preflight
  /** The application and the header's token, checked before any byte of the body is read. */
  readonly gate: (appId: string, source: SourceAddresses.Source, authorization: string | undefined) => Gate
  /**
   * Watches an unverified body as it arrives: the top-level scan looks for the token (again
   * each time the body has doubled, so the whole walk stays linear), a right token releases
   * the body from the budget, a wrong one answers at once; bytes still unverified are taken
   * from the budget, and a body past it is answered 503.
   */
  readonly watch: (appId: string, source: SourceAddresses.Source, gate: Extract<Gate, { _tag: "Unverified" }>) => Watch<Answer>
  /** Bytes of unverified bodies held now. */
  readonly unverifiedBytes: () => number
  /** Whether a delivery sent now would be stored, judged by the latest appends. */
  readonly storeHealth: () => StoreHealth
  readonly tooLarge: () => Answer
  /**
   * Decides a delivery in plain callbacks (no fiber per request): `done` gets the answer once
   * the record is durable, or why it was refused. Never throws; every failure is an answer
   * (and a log line when it is ours).
   */
  readonly ingest: (delivery: Delivery, done: (answer: Answer) => void) => void
  /**
   * The server span of a delivery, or undefined when no tracer is installed: with tracing off
   * the request path makes no span at all (docs/architecture.md §4.17).
   */
  readonly startSpan: (appId: string) => Tracer.Span | undefined
  /** Ends a delivery's span with its answer. */
  readonly endSpan: (span: Tracer.Span, answer: Answer) => void
}

const APP_ID = /^(?:0|[1-9][0-9]{0,39})$/
export const make = Effect.fnUntraced(function*(initial: Config) {
  const log = yield* DirectAppend.DirectAppend
  const apps = yield* WebhookApps
  const context = yield* Effect.context<never>()
  const clock = yield* Clock.Clock
  // Log lines only: the request path itself runs no effect.
  const runFork = Effect.runForkWith(context)
  const metrics = IngestionMetrics.makeRecorder(context)
  const tracer = Context.get(context, Tracer.Tracer)
  const tracing = tracer !== Tracer.nativeTracer
  const headSample = Context.get(context, TraceContext.HeadSampler)
  const decided = Context.make(TraceContext.Decided, true)
  let config = initial
  const failures = AuthFailures.make(initial.authFailures)
  const prefix = `${initial.basePath}/`

  const preflight = (head: Head): Preflight => {
    const q = head.url.indexOf("?")
    const path = q === -1 ? head.url : head.url.slice(0, q)
    const appId = path.startsWith(prefix) ? path.slice(prefix.length) : undefined
    // Exact paths only: `/webhooks/1/` or `/webhooks/1/x` is not found, never redirected.
    if (appId === undefined || !APP_ID.test(appId)) {
      return { _tag: "Reject", answer: reject(404, "not_found", `no such path; webhooks are POSTed to ${prefix}<appId>`) }
    }
    if (head.method !== "POST") {
      return { _tag: "Reject", answer: reject(405, "method", "webhooks must be POSTed", { allow: "POST" }) }
    }
    const source = SourceAddresses.resolve(head.peer, head.forwardedFor, config.trustedProxies)
    if (config.sourceAllowlist !== undefined && !config.sourceAllowlist.has(source.client)) {
      return { _tag: "Reject", answer: reject(403, "forbidden_source", `source address ${source.client} is not allowed`) }
    }
    if (head.contentLength !== undefined && Number(head.contentLength) > config.maxBodyBytes) {
      return { _tag: "Reject", answer: tooLarge() }
    }
    return { _tag: "Continue", appId, source }
  }

  const budget = Unverified.make(initial.unverified)
  const closing = (answer: Answer): Answer =>
    answer.close ? answer : { ...answer, headers: { ...answer.headers, connection: "close" }, close: true }
  const OVER_BUDGET = reject(503, "over_budget", "too many unverified request bodies in flight; deliver again", { "retry-after": "1", connection: "close" }, true)

  /**
   * A wrong token: counted against the source, and answered 401, or 429 once the source is
   * throttled. A throttled source is still heard: a delivery that proves its token is stored
   * (docs/operations.md, "Unauthenticated traffic").
   */
  const refuse = (appId: string, client: string, message: string): Answer => {
    const now = clock.currentTimeMillisUnsafe()
    const wait = failures.blockedFor(appId, client, now)
    failures.failed(appId, client, now)
    return wait > 0
      ? reject(429, "throttled", "too many deliveries with a wrong verify token; wait", { "retry-after": String(wait) })
      : reject(401, "unauthorized", message)
  }

  const gate = (appId: string, source: SourceAddresses.Source, authorization: string | undefined): Gate => {
    const found = apps.lookup(appId)
    if (Result.isFailure(found)) {
      runFork(Effect.logError("webhook apps lookup failed", found.failure.message))
      return { _tag: "Reject", answer: closing(APPS_UNAVAILABLE) }
    }
    const app = Option.getOrUndefined(found.success)
    // 404 rather than 401: the path names no application here (docs/architecture.md, section 6).
    if (app === undefined || !app.enabled) return { _tag: "Reject", answer: closing(UNKNOWN_APP) }
    if (authorization !== undefined) {
      return VerifyToken.tokenValid(app, VerifyToken.headerToken(authorization))
        ? VERIFIED
        : { _tag: "Reject", answer: closing(refuse(appId, source.client, "wrong verify token in Authorization")) }
    }
    return { _tag: "Unverified", app, throttled: failures.blockedFor(appId, source.client, clock.currentTimeMillisUnsafe()) > 0 }
  }

  const watch = (appId: string, source: SourceAddresses.Source, g: Extract<Gate, { _tag: "Unverified" }>): Watch<Answer> => {
    let held = 0
    let verified = false
    let nextScan = 0
    const window = budget.settings.throttledScanBytes
    return {
      chunk: (added, size, bytes) => {
        if (verified) return undefined
        if (size >= nextScan || (g.throttled && size >= window)) {
          nextScan = size * 2
          const field = TokenField.scan(bytes())
          if (field._tag === "Found") {
            if (field.token === undefined || !VerifyToken.tokenValid(g.app, field.token)) {
              return closing(refuse(appId, source.client, field.token === undefined ? "webhooksVerifyToken must be a string" : "wrong webhooksVerifyToken"))
            }
            verified = true
            budget.give(held)
            held = 0
            return undefined
          }
          if (g.throttled && size >= window) {
            return reject(429, "throttled", `too many deliveries with a wrong verify token: prove the token in Authorization or in the first ${window} bytes`, {
              "retry-after": String(Math.max(1, failures.blockedFor(appId, source.client, clock.currentTimeMillisUnsafe()))),
              connection: "close"
            }, true)
          }
        }
        if (!budget.take(added)) return OVER_BUDGET
        held += added
        return undefined
      },
      release: () => {
        budget.give(held)
        held = 0
      }
    }
  }

  const tooLarge = () =>
    reject(413, "too_large", `body larger than ${config.maxBodyBytes} bytes`, { connection: "close" }, true)

  let health: StoreHealth = { failing: false, failures: 0, since: null }
  const HEALTHY = health
  const storeFailed = () => {
    health = { failing: true, failures: health.failures + 1, since: health.since ?? clock.currentTimeMillisUnsafe() }
  }
  const storeSucceeded = () => {
    if (health.failing) health = HEALTHY
  }

  const STORE_FAILED = reject(503, "store_failed", "the event could not be stored; deliver again", { "retry-after": "1" })
  const STORE_TIMEOUT = reject(503, "store_failed", "the event was not stored in time; deliver again", { "retry-after": "1" })

  /** The log's verdict on the record, as an answer; a slow log is answered 503 at the deadline. */
  const store = (record: LogRecord.NewRecord, parent: Tracer.Span | undefined, done: (answer: Answer) => void): void => {
    // The append's span is the one the record carries: projection and plugins link to it.
    const span = parent === undefined || !parent.sampled ? undefined : childSpan(parent, "EventLog.append", { "ocs.log.source": "webhook", "ocs.event.type": record.type })
    if (span !== undefined) {
      record = { ...record, meta: TraceContext.inject(record.meta, span) }
      const finish = done
      done = (answer) => {
        span.attribute("ocs.outcome", answer.outcome)
        span.end(clock.currentTimeNanosUnsafe(), answer.status === 200 ? Exit.void : Exit.fail(answer.outcome))
        finish(answer)
      }
    }
    let answered = false
    const timer = setTimeout(() => {
      answered = true
      storeFailed()
      runFork(Effect.logError("webhook not stored in time", { appId: record.appId, type: record.type, timeoutMillis: config.storeTimeoutMillis }))
      done(STORE_TIMEOUT)
    }, config.storeTimeoutMillis)
    log.append([record], (exit) => {
      if (answered) return
      answered = true
      clearTimeout(timer)
      if (Exit.isSuccess(exit)) {
        storeSucceeded()
        return done(exit.value[0]?._tag === "Duplicate" ? DUPLICATE : ACCEPTED)
      }
      const error = Cause.findErrorOption(exit.cause)
      if (Option.isSome(error) && error.value._tag === "InvalidRecord") {
        // A record the log refuses will be refused on every redelivery too: not a 503.
        runFork(Effect.logWarning("webhook refused by the event log", error.value.message))
        return done(reject(400, "bad_envelope", error.value.message))
      }
      // Not durable: never 200. 503 makes the service deliver again.
      storeFailed()
      runFork(Effect.logError("webhook not stored", { appId: record.appId, type: record.type }, Cause.pretty(exit.cause)))
      done(STORE_FAILED)
    })
  }

  const unauthorized = (d: Delivery, message: string): Answer => refuse(d.appId, d.source.client, message)

  /**
   * docs/api-catalogue.md, Authentication 8: the token is in the body field `webhooksVerifyToken`, or in the
   * `Authorization` header. Every token a delivery presents must verify: the header first (no
   * look at the body at all), then the body field, found by a byte scan (./tokenField.ts)
   * before anything is decoded or parsed. Only an authenticated body is parsed.
   * Returns the answer of a refused delivery, or where the token is.
   */
  const authenticate = (d: Delivery, app: WebhookApp): Answer | { readonly tokenSource: "body" | "header"; readonly field: TokenField.Scan } => {
    const header = d.authorization === undefined ? undefined : VerifyToken.headerToken(d.authorization)
    if (header !== undefined && !VerifyToken.tokenValid(app, header)) return unauthorized(d, "wrong verify token in Authorization")
    const field = TokenField.scan(d.bytes)
    switch (field._tag) {
      case "Malformed":
        return reject(400, "bad_json", Envelope.blank(d.bytes) ? "empty body: expected a JSON document" : "invalid JSON")
      case "Absent":
      case "NotObject":
        return header === undefined ? unauthorized(d, "missing webhooksVerifyToken") : { tokenSource: "header", field }
      case "Found": {
        if (field.token === undefined) return unauthorized(d, "webhooksVerifyToken must be a string")
        if (!VerifyToken.tokenValid(app, field.token)) return unauthorized(d, "wrong webhooksVerifyToken")
        // JSON.parse keeps the last of duplicate keys: refusing them leaves no doubt about
        // which token was checked, and leaves one value to redact.
        const again = TokenField.scan(d.bytes, field.next)
        if (again._tag === "Found") return reject(400, "bad_envelope", "webhooksVerifyToken appears more than once")
        if (again._tag === "Malformed") return reject(400, "bad_json", "invalid JSON")
        return { tokenSource: header === undefined ? "body" : "header", field }
      }
    }
  }

  /** Everything after the application is known: authenticate, parse, validate, store. */
  const decide = (d: Delivery, found: Option.Option<WebhookApp>, done: (answer: Answer) => void): void => {
    const app = Option.getOrUndefined(found)
    // 404 rather than 401: the path names no application here (docs/architecture.md, section 6).
    if (app === undefined || !app.enabled) return done(UNKNOWN_APP)
    const auth = authenticate(d, app)
    if ("status" in auth) return done(auth)
    // The stored body is the received one with the token's value replaced: a verify token at
    // rest (event log, unknown events, exports) would let anyone who reads them forge deliveries.
    const stored = auth.field._tag === "Found" ? TokenField.redact(d.bytes, auth.field.valueStart, auth.field.valueEnd) : d.bytes
    const text = Json.decodeUtf8(stored)
    if (Result.isFailure(text)) return done(reject(400, "bad_json", text.failure.message))
    // Validation and the top-level fields only: integers beyond 2^53 are read from their
    // text (businessIdOf); the body is stored as received, never re-serialised. Parsing the
    // redacted text also keeps the token out of any parser message.
    const parsed = Json.parseLossy(text.success)
    if (Result.isFailure(parsed)) return done(reject(400, "bad_json", parsed.failure.message))
    const value = parsed.success
    if (!Predicate.isObject(value) || Array.isArray(value)) return done(reject(400, "bad_envelope", "body must be a JSON object"))
    const fields = value as Record<string, unknown>
    // A leading byte order mark is kept in the stored text (byte-exact) but is no JSON.
    const json = text.success.charCodeAt(0) === 0xfeff ? text.success.slice(1) : text.success
    const businessId = Envelope.businessIdOf(json, fields)
    if (Result.isFailure(businessId)) return done(reject(400, "bad_envelope", businessId.failure))
    // docs/api-catalogue.md, §10 Webhooks: `event` names the event; every other field is kept as is.
    const event = fields["event"]
    if (typeof event !== "string" || event.length === 0) {
      return done(reject(400, "bad_envelope", "`event` must be a non-empty string"))
    }
    // Kept whatever its shape (the log is the truth), but a shape the reference does not
    // document is flagged here: a warning and a counter; the decoder keeps it as an unknown event.
    const undocumented = Webhook.undocumentedShape(event, fields["data"])
    if (undocumented !== undefined) {
      metrics.undocumented()
      runFork(Effect.logWarning("webhook of an undocumented shape stored, not applied", { appId: d.appId, businessId: businessId.success, event, why: undocumented }))
    }
    store({
      appId: d.appId,
      businessId: businessId.success,
      source: "webhook",
      type: event,
      receivedAt: clock.currentTimeMillisUnsafe(),
      body: text.success,
      // docs/api-catalogue.md, Delivery rules 2: redeliveries carry the same body, so its bytes are the key.
      dedupeKey: DedupeKey.of(d.appId, stored),
      meta: meta(d, auth.tokenSource)
    }, d.span, done)
  }

  const ingest = (d: Delivery, done: (answer: Answer) => void): void => {
    try {
      const found = apps.lookup(d.appId)
      if (Result.isFailure(found)) {
        runFork(Effect.logError("webhook apps lookup failed", found.failure.message))
        return done(APPS_UNAVAILABLE)
      }
      decide(d, found.success, done)
    } catch (cause) {
      runFork(Effect.logError("webhook receiver defect", Cause.pretty(Cause.die(cause))))
      done(STORE_FAILED)
    }
  }

  const childSpan = (parent: Tracer.Span, name: string, attributes: Readonly<Record<string, unknown>>): Tracer.Span => {
    const span = tracer.span({
      name,
      parent: Option.some(parent),
      annotations: Context.empty(),
      links: [],
      startTime: clock.currentTimeNanosUnsafe(),
      kind: "internal",
      root: false,
      sampled: parent.sampled
    })
    for (const key in attributes) span.attribute(key, attributes[key])
    return span
  }

  // Names and ids only: never a token, a header value or a byte of the body.
  const startSpan = (appId: string): Tracer.Span | undefined => {
    // Sampled out: no span at all (it would live across the commit and cost a collection).
    if (!tracing || !headSample()) return undefined
    const span = tracer.span({
      name: "webhook",
      parent: Option.none(),
      annotations: decided,
      links: [],
      startTime: clock.currentTimeNanosUnsafe(),
      kind: "server",
      root: true,
      sampled: true
    })
    span.attribute("ocs.app_id", appId)
    span.attribute("http.request.method", "POST")
    return span
  }

  const endSpan = (span: Tracer.Span, answer: Answer): void => {
    span.attribute("http.response.status_code", answer.status)
    span.attribute("ocs.outcome", answer.outcome)
    span.end(clock.currentTimeNanosUnsafe(), answer.status < 400 ? Exit.void : Exit.fail(answer.outcome))
  }

  return {
    config: () => config,
    startSpan,
    endSpan,
    update: (change) => {
      config = { ...config, ...change }
    },
    metrics,
    authFailures: failures,
    preflight,
    gate,
    watch,
    unverifiedBytes: budget.used,
    storeHealth: () => health,
    tooLarge,
    ingest
  } satisfies Receiver
})

/** Audit data about the delivery; never the verify token. */
const meta = (d: Delivery, tokenSource: "body" | "header"): Record<string, unknown> => {
  const m: Record<string, unknown> = { remoteAddress: d.source.peer }
  if (d.source.client !== d.source.peer) m["clientAddress"] = d.source.client
  if (d.forwardedFor !== undefined) m["forwardedFor"] = d.forwardedFor
  if (d.userAgent !== undefined) m["userAgent"] = d.userAgent
  m["contentLength"] = d.bytes.length
  m["tokenSource"] = tokenSource
  // The stored text keeps a leading byte order mark (which many readers trip on): say so.
  if (d.bytes[0] === 0xef && d.bytes[1] === 0xbb && d.bytes[2] === 0xbf) m["utf8Bom"] = true
  return m
}
