/**
 * Businesses connect themselves (docs/architecture.md §4.32, docs/api-catalogue.md §8): the
 * grant flow's parts that are not HTTP routes.
 *
 * - `States`: the `state` carried by the return link. It is signed (HMAC-SHA256 with a key of
 *   this process), names its application, expires, and is single use: the callback must find
 *   it among the pending states, which are bounded (the oldest go first) and evicted once
 *   expired, so callers without credentials cannot grow them.
 * - `exchange`: `POST {pos}/v3.0/app/getaccesstoken?appId=` with `{accessCode, secretKey}` and no
 *   Authorization header, its answer decoded with a Schema.
 * - `Section`: the `connect` settings.
 */
import { Effect, Redacted, Result, Schema } from "effect"
import * as Crypto from "node:crypto"
import { Ids } from "@ocs/protocol"
import * as Json from "@ocs/protocol/Json"

/** The `connect` section of the configuration. */
export const Section = Schema.Struct({
  /** The service's grant page (default: the simulator's, next to `api.posBaseUrl`). */
  grantPageUrl: Schema.optional(Schema.String),
  /** How long a connect link's state is accepted back (default 1800: half an hour to grant). */
  stateTtlSeconds: Schema.optional(Schema.Finite.check(Schema.isGreaterThan(0))),
  /** States pending at once; past it the oldest is dropped (default 10000). */
  maxPendingStates: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
  /** How often the tokens of applications with a secret key are checked (app/checkaccesstoken; default 86400). */
  checkIntervalSeconds: Schema.optional(Schema.Finite.check(Schema.isGreaterThan(0)))
})
export type Section = typeof Section.Type

export const defaults = { stateTtlSeconds: 1800, maxPendingStates: 10_000, checkIntervalSeconds: 86_400 } as const

/** The link a business opens to connect itself (the console shows it, notices carry it). */
export const link = (publicUrl: string, appId: string): string => `${publicUrl.replace(/\/+$/, "")}/connect/${appId}`

/** The grant page next to a POS base URL: `http://host:port/pos` -> `http://host:port/oauth`. */
export const grantPageNextTo = (posBaseUrl: string): string => new URL("/oauth", posBaseUrl).toString()

/** Why a callback's state is refused, in words a shop owner understands. */
export type StateRefusal = "forged" | "expired" | "used" | "other-app"

export interface States {
  /** A new state for `appId`, pending until `ttlMs` passes. */
  readonly issue: (appId: string, now: number) => string
  /** Checks and spends a state: the appId it was issued for, or why it is refused. */
  readonly take: (state: string, appId: string, now: number) => { readonly ok: true } | { readonly ok: false; readonly why: StateRefusal }
  readonly pending: () => number
}

export const makeStates = (options: { readonly ttlMs: number; readonly maxPending: number; readonly key?: Buffer | undefined }): States => {
  const key = options.key ?? Crypto.randomBytes(32)
  /** nonce -> expiry (ms); insertion order is issue order, so the first entry is the oldest. */
  const pending = new Map<string, number>()
  const sign = (body: string) => Crypto.createHmac("sha256", key).update(body).digest("base64url")
  const evictExpired = (now: number) => {
    for (const [nonce, exp] of pending) {
      if (exp > now) break
      pending.delete(nonce)
    }
  }
  return {
    issue: (appId, now) => {
      evictExpired(now)
      while (pending.size >= options.maxPending) pending.delete(pending.keys().next().value!)
      const nonce = Crypto.randomBytes(16).toString("base64url")
      const exp = now + options.ttlMs
      pending.set(nonce, exp)
      const body = `${appId}.${nonce}.${exp}`
      return `${body}.${sign(body)}`
    },
    take: (state, appId, now) => {
      evictExpired(now)
      const parts = state.split(".")
      if (parts.length !== 4 || state.length > 200) return { ok: false, why: "forged" }
      const [app, nonce, exp, mac] = parts as [string, string, string, string]
      const expected = sign(`${app}.${nonce}.${exp}`)
      if (mac.length !== expected.length || !Crypto.timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) {
        return { ok: false, why: "forged" }
      }
      if (app !== appId) return { ok: false, why: "other-app" }
      if (Number(exp) <= now) return { ok: false, why: "expired" }
      // Signed and in time but not pending: already used (or dropped, past the bound).
      if (!pending.delete(nonce)) return { ok: false, why: "used" }
      return { ok: true }
    },
    pending: () => pending.size
  }
}

/**
 * Depots or pages of a grant: ids, or `"All"` (the reference: an empty list or All means every
 * depot or page; docs/api-catalogue.md §8).
 */
const ScopeIds = Schema.Union([Schema.Array(Schema.Union([Schema.String, Schema.Finite, Schema.BigInt])), Schema.String])

/** A grant as getaccesstoken (and checkaccesstoken) answer it (docs/api-catalogue.md §8). */
export const GrantData = Schema.Struct({
  accessToken: Schema.optional(Schema.String),
  expiredAt: Schema.Finite,
  // Lossless JSON: ids beyond 2^53 arrive as bigint.
  businessId: Schema.Union([Schema.String, Schema.Finite, Schema.BigInt]),
  depotIds: Schema.optional(ScopeIds),
  pageIds: Schema.optional(ScopeIds),
  permissions: Schema.optional(Schema.Array(Schema.String))
})

const Answer = Schema.Union([
  Schema.Struct({ code: Schema.Literal(1), data: GrantData }),
  Schema.Struct({ code: Schema.Literal(0), errorCode: Schema.optional(Schema.String), messages: Schema.optional(Schema.Unknown) })
])

/** A grant, normalised: ids as decimal strings, the expiry in ms. */
export interface Grant {
  readonly accessToken: Redacted.Redacted<string>
  readonly businessId: string
  readonly expiresAt: number
  readonly permissions: ReadonlyArray<string>
  readonly depots: ReadonlyArray<string>
  readonly pages: ReadonlyArray<string>
}

export class GrantRefused extends Schema.TaggedError<GrantRefused>()("GrantRefused", {
  errorCode: Schema.String,
  message: Schema.String
}) {}

const messageOf = (e: unknown) => e instanceof Error ? e.message : String(e)
/** Scope ids as decimal strings; every depot or page (`"All"`, alone or in the list) is the empty list, as the engine reads it. */
export const scopeIds = (xs: typeof ScopeIds.Type | undefined): ReadonlyArray<string> => {
  const list = typeof xs === "string" ? xs.split(",") : xs ?? []
  const all = list.some((x) => typeof x === "string" && x.trim().toLowerCase() === "all")
  return all ? [] : list.map((x) => String(x).trim()).filter((x) => x !== "")
}
const ids = scopeIds

const decodeAnswer = (text: string): Effect.Effect<typeof Answer.Type, unknown> => {
  const parsed = Json.parse(text)
  return Result.isFailure(parsed) ? Effect.fail(parsed.failure) : Schema.decodeUnknownEffect(Answer)(parsed.success)
}

const post = (url: string, body: unknown, headers: Record<string, string>, timeoutMs: number) =>
  Effect.tryPromise({
    try: async (signal) => {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
      })
      return res.text()
    },
    catch: (e) => new GrantRefused({ errorCode: "UNREACHABLE", message: `the service did not answer: ${messageOf(e)}` })
  }).pipe(
    Effect.flatMap((text) =>
      Effect.mapError(decodeAnswer(text), () => new GrantRefused({ errorCode: "BAD_ANSWER", message: "the service's answer could not be read" }))
    ),
    Effect.flatMap((answer) =>
      answer.code === 1
        ? Effect.succeed(answer.data)
        : Effect.fail(new GrantRefused({
          errorCode: answer.errorCode ?? "UNKNOWN",
          // The service's words about a code or key, never the values themselves.
          message: typeof answer.messages === "string" ? answer.messages : JSON.stringify(answer.messages ?? "")
        }))
    )
  )

/** Exchanges an access code for a grant. */
export const exchange = (input: {
  readonly posBaseUrl: string
  readonly appId: string
  readonly accessCode: string
  readonly secretKey: Redacted.Redacted<string>
  readonly timeoutMs?: number | undefined
}): Effect.Effect<Grant, GrantRefused> =>
  post(
    `${input.posBaseUrl}/v3.0/app/getaccesstoken?appId=${encodeURIComponent(input.appId)}`,
    { accessCode: input.accessCode, secretKey: Redacted.value(input.secretKey) },
    {},
    input.timeoutMs ?? 15_000
  ).pipe(Effect.flatMap((data) => {
    const businessId = Ids.normalize(data.businessId)
    if (data.accessToken === undefined || data.accessToken === "" || businessId === undefined) {
      return Effect.fail(new GrantRefused({ errorCode: "BAD_ANSWER", message: "the service's answer holds no token or business" }))
    }
    return Effect.succeed({
      accessToken: Redacted.make(data.accessToken),
      businessId,
      expiresAt: data.expiredAt * 1000,
      permissions: data.permissions ?? [],
      depots: ids(data.depotIds),
      pages: ids(data.pageIds)
    })
  }))

/** What `app/checkaccesstoken` tells about a token: its expiry and scopes (no token in the answer). */
export const check = (input: {
  readonly posBaseUrl: string
  readonly appId: string
  readonly businessId: string
  readonly accessToken: Redacted.Redacted<string>
  readonly secretKey: Redacted.Redacted<string>
  readonly timeoutMs?: number | undefined
}): Effect.Effect<Omit<Grant, "accessToken" | "businessId">, GrantRefused> =>
  post(
    `${input.posBaseUrl}/v3.0/app/checkaccesstoken?appId=${encodeURIComponent(input.appId)}&businessId=${encodeURIComponent(input.businessId)}`,
    { secretKey: Redacted.value(input.secretKey) },
    { authorization: Redacted.value(input.accessToken) },
    input.timeoutMs ?? 15_000
  ).pipe(Effect.map((data) => ({
    expiresAt: data.expiredAt * 1000,
    permissions: data.permissions ?? [],
    depots: ids(data.depotIds),
    pages: ids(data.pageIds)
  })))
