/**
 * The API client: one call, or a whole list as a Stream of pages.
 *
 * Every call waits for a slot of its budget (RateLimiter), goes out over keep-alive HTTP,
 * and comes back as decoded data plus warnings, or as a typed error. Timeouts, resets and
 * 5xx answers are retried with jittered exponential backoff, each retry spending budget like
 * any call. An ERR_429 locks its key and the call waits for the lock to end before it is sent
 * again (a 429 never uses up the retries, and no call for a locked key leaves the process).
 * API errors that cannot succeed on retry return at once.
 */
import { Clock, Context, Duration, Effect, Layer, Option, Random, Redacted, Result, Schedule, Schema, Stream } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { ApiError, Envelope, Ids, Operation, Paginator, type Warning } from "@ocs/protocol"
import { type BudgetKey, keyString, type LockWaitExceeded, type Priority, RateLimiter } from "./RateLimiter.ts"
import { ConnectionFailed, CursorStalled, isTransient, RecordDecodeError, RequestTimeout, ServerError } from "./TransportError.ts"
import { TransportEvents } from "./TransportEvents.ts"

/** Who calls: a business that granted the application access, and its token. */
export interface TenantAccess extends Ids.Tenant {
  /** docs/api-catalogue.md, Authentication 1: sent as is in the Authorization header. Never logged. */
  readonly accessToken: Redacted.Redacted<string>
}

export const tenantAccess = (appId: string | number | bigint, businessId: string | number | bigint, accessToken: string): TenantAccess => ({
  ...Ids.makeTenant(appId, businessId),
  accessToken: Redacted.make(accessToken)
})

/**
 * The `api` section of a server's configuration: the two base URLs and the per-request
 * timeout (`timeoutMs`, the name configurations use; default `defaults.timeoutMs`).
 */
export const ApiSection = Schema.Struct({
  posBaseUrl: Schema.String,
  vpageBaseUrl: Schema.String,
  timeoutMs: Schema.optional(Schema.Finite.check(Schema.isGreaterThan(0)))
})
export type ApiSection = typeof ApiSection.Type

/** The client's defaults, written once. */
export const defaults = { timeoutMs: 30_000 } as const

export interface ClientOptions {
  /** docs/api-catalogue.md, Requests: `{base_url}` of each family. */
  readonly posBaseUrl: string
  readonly vpageBaseUrl: string
  /** Per-request timeout (default `defaults.timeoutMs`, 30 s). */
  readonly timeoutMs?: number | undefined
  /** Attempts for transient failures, the first included (default 5). */
  readonly maxAttempts?: number | undefined
  /** Backoff base and cap (default 200 ms, 30 s); full jitter. */
  readonly backoffBaseMs?: number | undefined
  readonly backoffMaxMs?: number | undefined
  /** How many ERR_429 answers one call may wait out before failing (default 5). */
  readonly maxRateLimitedWaits?: number | undefined
}

export interface CallOptions {
  readonly priority?: Priority | undefined
  /**
   * Whether timeouts, resets and 5xx answers are sent again (default true). The write path
   * turns it off: such a write may have taken effect, and only reading back can tell, so the
   * call fails with the transient error instead (an ERR_429 is still waited out: a locked call
   * was not applied).
   */
  readonly retryTransient?: boolean | undefined
  /** Told of every HTTP answer of the call (status and exact body), failures included: a ledger keeps them. */
  readonly onAnswer?: ((answer: { readonly status: number; readonly text: string }) => void) | undefined
}

export interface CallResult<A> {
  readonly data: A
  readonly warnings: ReadonlyArray<Warning.Warning>
  /** The response body exactly as received. */
  readonly text: string
}

export type CallError =
  | ApiError.ApiError
  | ApiError.MalformedResponse
  | RequestTimeout
  | ConnectionFailed
  | ServerError
  | LockWaitExceeded

export interface PageOptions {
  readonly filters?: Readonly<Record<string, unknown>> | undefined
  readonly size?: number | undefined
  readonly sort?: unknown
  /** Resume from a stored cursor; omitted: the first page. */
  readonly cursor?: Paginator.Cursor | undefined
  readonly priority?: Priority | undefined
  /** Stop when the same cursor comes back this many times without records (default 20). */
  readonly maxStalls?: number | undefined
}

/** A page as the paginator yields it: the raw records (lossless JSON) and the cursors. */
export type RawPage = Paginator.Page<unknown> & { readonly warnings: ReadonlyArray<Warning.Warning> }

export class CommerceClient extends Context.Service<CommerceClient, {
  /** One call: decoded data (through the operation's schema for commands) and warnings. */
  readonly call: <Item>(
    tenant: TenantAccess,
    operation: Operation.Operation<Item>,
    body: unknown,
    options?: CallOptions
  ) => Effect.Effect<CallResult<unknown>, CallError>
  /**
   * A list operation as a Stream of pages. `next` is sent back exactly; a short page with a
   * `next` is followed; absent or null `next` ends. Each page carries the cursor that led to
   * it and the one after it, so a caller can persist `next` and resume after a crash.
   */
  readonly pages: (
    tenant: TenantAccess,
    operation: Operation.Operation<unknown>,
    options?: PageOptions
  ) => Stream.Stream<RawPage, CallError | CursorStalled>
  /** The records of a list, decoded with the operation's record schema. */
  readonly records: <Item>(
    tenant: TenantAccess,
    operation: Operation.Operation<Item>,
    options?: PageOptions
  ) => Stream.Stream<Item, CallError | CursorStalled | RecordDecodeError>
}>()("@ocs/transport/CommerceClient") {
  static readonly layer = (
    options: ClientOptions
  ): Layer.Layer<CommerceClient, never, HttpClient.HttpClient | RateLimiter | TransportEvents> =>
    Layer.effect(CommerceClient, make(options))
}

const EXCERPT = 200

const isRateLimited = (error: CallError): error is ApiError.RateLimited | ApiError.ExceededRateLimit =>
  error._tag === "RateLimited" || error._tag === "ExceededRateLimit"

/** Timeouts, resets, 5xx, and the API errors the service marks as worth another try. */
const isRetryable = (error: CallError): boolean =>
  isTransient(error) || (error._tag === "UnknownApiError" && ApiError.isRetryable(error))

/**
 * Full jitter: a random delay between 0 and the bound, so that many tenants failing at once
 * (a service hiccup) spread their retries over the whole backoff instead of returning together.
 */
const fullJitter = (boundMs: number) => Effect.map(Random.next, (r) => Duration.millis(Math.round(r * boundMs)))

const classifyConnection = (cause: unknown): "reset" | "refused" | "other" => {
  const text = String((cause as { code?: unknown })?.code ?? "") + " " + String(cause) + " " +
    String((cause as { cause?: unknown })?.cause ?? "")
  if (/ECONNRESET|socket hang up|UND_ERR_SOCKET|other side closed/i.test(text)) return "reset"
  if (/ECONNREFUSED/i.test(text)) return "refused"
  return "other"
}

export const make = Effect.fnUntraced(function*(options: ClientOptions) {
  const http = yield* HttpClient.HttpClient
  const limiter = yield* RateLimiter
  const events = yield* TransportEvents
  const timeoutMs = options.timeoutMs ?? defaults.timeoutMs
  const maxAttempts = options.maxAttempts ?? 5
  const backoffBase = options.backoffBaseMs ?? 200
  const backoffMax = options.backoffMaxMs ?? 30_000
  const maxLockWaits = options.maxRateLimitedWaits ?? 5
  const base = (family: Operation.Family) => (family === "pos" ? options.posBaseUrl : options.vpageBaseUrl)

  /** One HTTP exchange; the answer decoded as an envelope. */
  const send = (tenant: TenantAccess, op: Operation.Operation<unknown>, bodyText: string, onAnswer?: CallOptions["onAnswer"]) => {
    const name = Operation.key(op)
    const request = HttpClientRequest.post(Operation.url(base(op.family), op, tenant)).pipe(
      HttpClientRequest.setHeaders(Operation.headers(Redacted.value(tenant.accessToken))),
      HttpClientRequest.bodyText(bodyText, "application/json")
    )
    return http.execute(request).pipe(
      Effect.flatMap((response) => Effect.map(response.text, (text) => ({ status: response.status, text }))),
      Effect.mapError((error) =>
        new ConnectionFailed({
          operation: name,
          reason: classifyConnection(error.reason.cause ?? error),
          message: `${name}: connection failed (${error.reason._tag})`
        })
      ),
      Effect.timeoutOrElse({
        duration: timeoutMs,
        orElse: () =>
          Effect.fail(new RequestTimeout({ operation: name, timeoutMs, message: `${name}: no answer within ${timeoutMs} ms` }))
      }),
      Effect.flatMap(({ status, text }): Effect.Effect<Envelope.Success, ApiError.ApiError | ApiError.MalformedResponse | ServerError> => {
        onAnswer?.({ status, text })
        const decoded = Envelope.decode(text)
        // docs/api-catalogue.md, §11 Errors: HTTP status codes with failures. An envelope decides,
        // whatever the status; a 5xx that is not an envelope is a server failure.
        if (Result.isFailure(decoded) && decoded.failure._tag === "MalformedResponse" && status >= 500) {
          return Effect.fail(
            new ServerError({
              operation: name,
              status,
              excerpt: text.slice(0, EXCERPT),
              message: `${name}: HTTP ${status} without an API envelope`
            })
          )
        }
        return Result.isSuccess(decoded) ? Effect.succeed(decoded.success) : Effect.fail(decoded.failure)
      })
    )
  }

  const call = Effect.fn("CommerceClient.call")(function*(
    tenant: TenantAccess,
    op: Operation.Operation<unknown>,
    body: unknown,
    callOptions?: CallOptions
  ) {
    const bodyText = Operation.body(body)
    const key: BudgetKey = { tenant, operation: op }
    const k = keyString(key)
    const where = { appId: tenant.appId, businessId: tenant.businessId, operation: Operation.key(op), key: k }
    const priority = callOptions?.priority ?? "interactive"
    const retryTransient = callOptions?.retryTransient ?? true

    const once = limiter.withPermit(key, priority, () => send(tenant, op, bodyText, callOptions?.onAnswer)).pipe(
      Effect.tapError((error) => {
        if (!isRateLimited(error)) return Effect.void
        // docs/api-catalogue.md, Limits 2: stop calling that URL until unlockedAt. The lock makes the
        // next attempt (and every other call for the key) wait in the limiter.
        return Effect.gen(function*() {
          const receivedAt = yield* Clock.currentTimeMillis
          const lockedSeconds = error._tag === "RateLimited" ? error.lockedSeconds : undefined
          const unlockedAt = error._tag === "RateLimited" ? error.unlockedAt : undefined
          const until = yield* limiter.lock(key, { lockedSeconds, unlockedAt, receivedAt })
          yield* events.emit({ ...where, _tag: "LockTaken", until, lockedSeconds, unlockedAt, receivedAt })
        })
      })
    )
    // A 429 is waited out by the lock, with no delay of our own, and costs no retry attempt:
    // its count runs over the whole call, across the transient retries below.
    let lockWaits = 0
    const waitingOutLocks = once.pipe(Effect.retry({ while: (error) => isRateLimited(error) && ++lockWaits <= maxLockWaits }))

    // A write (retryTransient false) is never sent again here: no schedule to build per call.
    const success = retryTransient
      ? yield* Effect.retry(waitingOutLocks, transientBackoff(where))
      : yield* waitingOutLocks
    if (success.warnings.length > 0) yield* events.emit({ ...where, _tag: "WarningReceived", warnings: success.warnings })
    return { data: success.data, warnings: success.warnings, text: success.text } satisfies CallResult<unknown>
  })

  /** Transient failures retried with jittered exponential backoff, each retry announced. */
  const transientBackoff = (where: { readonly appId: string; readonly businessId: string; readonly operation: string; readonly key: string }) =>
    Schedule.exponential(backoffBase).pipe(
      Schedule.modifyDelay(({ duration }) => fullJitter(Math.min(backoffMax, Duration.toMillis(duration)))),
      Schedule.setInputType<CallError>(),
      // `attempt` counts the failures so far: the first retry follows attempt 1.
      Schedule.while(({ attempt, input }) => isRetryable(input) && attempt < maxAttempts),
      Schedule.tap(({ attempt, duration, input }) =>
        events.emit({ ...where, _tag: "RetryScheduled", attempt, reason: input._tag, delayMs: Duration.toMillis(duration) })
      )
    )

  const pages = (tenant: TenantAccess, op: Operation.Operation<unknown>, pageOptions: PageOptions = {}) => {
    const size = Math.min(pageOptions.size ?? op.pageSizeMax, op.pageSizeMax)
    const maxStalls = pageOptions.maxStalls ?? 20
    const name = Operation.key(op)
    interface State {
      readonly cursor: Option.Option<Paginator.Cursor>
      readonly stalls: number
    }
    const first: State = { cursor: Option.fromUndefinedOr(pageOptions.cursor), stalls: 0 }
    return Stream.paginate(first, (state: State) =>
      Effect.gen(function*() {
        const body: Record<string, unknown> = {}
        if (pageOptions.filters !== undefined) body["filters"] = pageOptions.filters
        body["paginator"] = Paginator.toRequest({ size, sort: pageOptions.sort, next: Option.getOrUndefined(state.cursor) })
        const result = yield* call(tenant, op, body, { priority: pageOptions.priority ?? "bulk" })
        const records: ReadonlyArray<unknown> = Array.isArray(result.data) ? result.data : result.data == null ? [] : [result.data]
        // docs/api-catalogue.md, Paginator 4: no next, or null, ends; rule 5: a short page with next goes on.
        const next = Paginator.nextCursor(result.text)
        const page: RawPage = { records, cursor: state.cursor, next, size, text: result.text, warnings: result.warnings }
        const same = Option.isSome(next) && Option.isSome(state.cursor) && next.value.text === state.cursor.value.text
        const stalls = same && records.length === 0 ? state.stalls + 1 : 0
        if (stalls >= maxStalls) {
          return yield* new CursorStalled({
            operation: name,
            cursor: Option.getOrThrow(next).text,
            repeats: stalls,
            message: `${name}: the same cursor came back ${stalls} times without records`
          })
        }
        return [[page], Option.map(next, (cursor): State => ({ cursor: Option.some(cursor), stalls }))] as const
      })
    )
  }

  const records = <Item>(tenant: TenantAccess, op: Operation.Operation<Item>, pageOptions?: PageOptions) => {
    const decode = Schema.decodeUnknownEffect(op.item)
    const name = Operation.key(op)
    return pages(tenant, op as Operation.Operation<unknown>, pageOptions).pipe(
      Stream.flatMap((page) => Stream.fromIterable(page.records.map((r, i) => [r, i] as const))),
      Stream.mapEffect(([record, index]) =>
        decode(record).pipe(
          Effect.mapError((e) => new RecordDecodeError({ operation: name, index, message: `${name}: record ${index}: ${e.message}` }))
        ) as Effect.Effect<Item, RecordDecodeError>
      )
    )
  }

  return CommerceClient.of({
    call: (tenant, op, body, callOptions) => call(tenant, op as Operation.Operation<unknown>, body, callOptions),
    pages,
    records
  })
})
