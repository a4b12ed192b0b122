/**
 * Typed errors of the Open Commerce Service API v3.0.
 *
 * docs/api-catalogue.md, §11 Errors. One tagged error per errorCode of the API reference (11 common codes, 2 of the page
 * service), `UnknownApiError` for any other code (kept, never dropped: the API reference says the
 * POS-only and operation-specific codes are "not shown"), and `MalformedResponse` for an
 * answer that is not a valid envelope at all.
 *
 * Every error says whether a retry can succeed and what, if anything, a person must do.
 */
import { Schema } from "effect"

/** docs/api-catalogue.md, §11 Errors: `messages` is a string, or a map from (dotted) field name to message. */
/**
 * `messages` of a failure: one text, a list of texts, or a map from (dotted) field name to
 * its message (docs/api-catalogue.md §11). A list's items are kept as received.
 */
export const Messages = Schema.Union([Schema.String, Schema.Array(Schema.Unknown), Schema.Record(Schema.String, Schema.Unknown)])
export type Messages = typeof Messages.Type

/** What a person has to do before a call can succeed. */
export const Action = Schema.Literals([
  "none", // retrying (after a wait) is enough
  "fix-request", // the request itself is wrong: a bug or bad input on our side
  "fix-configuration", // appId, businessId or a page id is wrong in our configuration
  "regrant", // the business must log in and grant the application again (new token)
  "enable-api", // the business must enable API use in its settings
  "contact-operator" // the application is locked: only the operator's technical team can lift it
])
export type Action = typeof Action.Type

const fields = {
  /** The errorCode exactly as received. */
  errorCode: Schema.String,
  /** A sentence a person can act on (ours, with the server's detail appended). */
  message: Schema.String,
  /** `messages` (or ERR_429's singular `message`) exactly as received. */
  messages: Schema.optional(Messages),
  /** `data` as received, if any. */
  data: Schema.optional(Schema.Unknown)
}

export class InvalidAppId extends Schema.TaggedError<InvalidAppId>()("InvalidAppId", fields) {}
export class InvalidAccessToken extends Schema.TaggedError<InvalidAccessToken>()("InvalidAccessToken", fields) {}
export class InvalidVersion extends Schema.TaggedError<InvalidVersion>()("InvalidVersion", fields) {}
export class InvalidBusinessId extends Schema.TaggedError<InvalidBusinessId>()("InvalidBusinessId", fields) {}
export class InvalidDepotId extends Schema.TaggedError<InvalidDepotId>()("InvalidDepotId", fields) {}
export class ExceededRateLimit extends Schema.TaggedError<ExceededRateLimit>()("ExceededRateLimit", fields) {}
export class BusinessNotEnableApi extends Schema.TaggedError<BusinessNotEnableApi>()("BusinessNotEnableApi", fields) {}
export class InvalidData extends Schema.TaggedError<InvalidData>()("InvalidData", fields) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fields) {}
export class PageExpired extends Schema.TaggedError<PageExpired>()("PageExpired", fields) {}
export class InvalidPageId extends Schema.TaggedError<InvalidPageId>()("InvalidPageId", fields) {}

/** docs/api-catalogue.md, §11 Errors: `messages` maps a dotted field path to a message. */
export class InvalidFormFields extends Schema.TaggedError<InvalidFormFields>()("InvalidFormFields", {
  ...fields,
  fields: Schema.Record(Schema.String, Schema.String)
}) {}

/** docs/api-catalogue.md, §11 Errors: singular `message`, `data.lockedSeconds`, `data.unlockedAt`. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...fields,
  /** Seconds locked, as received (absent when the server left it out). */
  lockedSeconds: Schema.optional(Schema.Number),
  /** Unix time (seconds) when the lock ends, as received. */
  unlockedAt: Schema.optional(Schema.Number)
}) {}

/** A failure whose errorCode is not in the API reference's tables (or is missing): kept as received. */
export class UnknownApiError extends Schema.TaggedError<UnknownApiError>()("UnknownApiError", fields) {}

/** The answer was not a valid response envelope (not JSON, not an object, wrong field types). */
export class MalformedResponse extends Schema.TaggedError<MalformedResponse>()("MalformedResponse", {
  message: Schema.String,
  /** The first bytes of the body as received, for the log. */
  excerpt: Schema.String
}) {}

export type ApiError =
  | InvalidAppId
  | InvalidAccessToken
  | InvalidVersion
  | InvalidBusinessId
  | InvalidDepotId
  | ExceededRateLimit
  | BusinessNotEnableApi
  | InvalidFormFields
  | InvalidData
  | Forbidden
  | RateLimited
  | PageExpired
  | InvalidPageId
  | UnknownApiError

interface Entry {
  readonly make: (props: ApiErrorProps) => ApiError
  readonly retryable: boolean
  readonly action: Action
  readonly explain: string
}

interface ApiErrorProps {
  readonly errorCode: string
  readonly message: string
  readonly messages?: Messages | undefined
  readonly data?: unknown
}

/** The API reference's error tables, with what each code means for a caller. */
export const catalog: { readonly [code: string]: Entry } = {
  ERR_INVALID_APP_ID: {
    make: (p) => new InvalidAppId(p),
    retryable: false,
    action: "fix-configuration",
    explain: "the appId is not valid: check the application id in the configuration"
  },
  ERR_INVALID_ACCESS_TOKEN: {
    make: (p) => new InvalidAccessToken(p),
    retryable: false,
    action: "regrant",
    explain: "the access token is not valid (expired, revoked, or the app was removed): the business must grant access again"
  },
  ERR_INVALID_VERSION: {
    make: (p) => new InvalidVersion(p),
    retryable: false,
    action: "regrant",
    explain: "the access token was obtained under another API version: the business must grant access again under v3.0"
  },
  ERR_INVALID_BUSINESS_ID: {
    make: (p) => new InvalidBusinessId(p),
    retryable: false,
    action: "fix-configuration",
    explain: "the businessId is not valid for this token: check the tenant's businessId"
  },
  ERR_INVALID_DEPOT_ID: {
    make: (p) => new InvalidDepotId(p),
    retryable: false,
    action: "regrant",
    explain: "the depot was not selected when access was granted: the business must grant again including it"
  },
  ERR_EXCEEDED_RATE_LIMIT: {
    make: (p) => new ExceededRateLimit(p),
    retryable: true,
    action: "none",
    explain: "the application exceeded the rate limit: slow down"
  },
  ERR_BUSINESS_NOT_ENABLE_API: {
    make: (p) => new BusinessNotEnableApi(p),
    retryable: false,
    action: "enable-api",
    explain: "the business has not enabled API use: it must turn it on in its settings"
  },
  ERR_INVALID_FORM_FIELDS: {
    make: (p) => new InvalidFormFields({ ...p, fields: fieldMessages(p.messages) }),
    retryable: false,
    action: "fix-request",
    explain: "some request fields are invalid"
  },
  ERR_INVALID_DATA: {
    make: (p) => new InvalidData(p),
    retryable: false,
    action: "fix-request",
    explain: "the request body is not valid JSON"
  },
  ERR_403: {
    make: (p) => new Forbidden(p),
    retryable: false,
    action: "regrant",
    explain: "the access token lacks permission for this data: the business must grant again with that permission"
  },
  ERR_429: {
    make: (p) => {
      const data = (typeof p.data === "object" && p.data !== null ? p.data : {}) as Record<string, unknown>
      return new RateLimited({
        ...p,
        lockedSeconds: finiteOrUndefined(data["lockedSeconds"]),
        unlockedAt: finiteOrUndefined(data["unlockedAt"])
      })
    },
    retryable: true,
    action: "none",
    explain: "rate limit exceeded: this URL is locked for this business until unlockedAt; calling during the lock extends it"
  },
  ERR_PAGE_EXPIRED: {
    make: (p) => new PageExpired(p),
    retryable: false,
    action: "fix-configuration",
    explain: "the page has expired"
  },
  ERR_INVALID_PAGE_ID: {
    make: (p) => new InvalidPageId(p),
    retryable: false,
    action: "fix-configuration",
    explain: "the page id is not valid"
  }
}

const unknownEntry: Entry = {
  make: (p) => new UnknownApiError(p),
  // An unknown code may be transient or not; a bounded retry is the safer default.
  retryable: true,
  action: "none",
  explain: "the service answered with an error code this engine does not know"
}

const finiteOrUndefined = (u: unknown): number | undefined =>
  typeof u === "number" && Number.isFinite(u) ? u : typeof u === "bigint" ? Number(u) : undefined

const fieldMessages = (messages: Messages | undefined): Record<string, string> => {
  if (messages === undefined) return {}
  if (typeof messages === "string") return { "": messages }
  const out: Record<string, string> = {}
  if (Array.isArray(messages)) {
    // A list names no field: its texts are the failure's message, joined in order.
    const texts = messages.map((m) => typeof m === "string" ? m : JSON.stringify(m, (_, v) => typeof v === "bigint" ? v.toString() : v))
    if (texts.length > 0) out[""] = texts.join("; ")
    return out
  }
  for (const [key, value] of Object.entries(messages)) {
    out[key] = typeof value === "string" ? value : JSON.stringify(value, (_, v) => typeof v === "bigint" ? v.toString() : v)
  }
  return out
}

const detail = (messages: Messages | undefined): string => {
  if (messages === undefined) return ""
  if (typeof messages === "string") return messages
  return Object.entries(fieldMessages(messages)).map(([k, v]) => (k === "" ? v : `${k}: ${v}`)).join("; ")
}

/** The parts of a failure envelope an error is built from. */
export interface Failure {
  readonly errorCode?: string | undefined
  readonly messages?: Messages | undefined
  readonly message?: string | undefined
  readonly data?: unknown
}

/** Builds the typed error for a failure envelope (`code` 0). */
export const fromFailure = (failure: Failure): ApiError => {
  const code = failure.errorCode ?? ""
  const entry = Object.hasOwn(catalog, code) ? catalog[code]! : unknownEntry
  const messages = failure.messages ?? failure.message
  const said = detail(messages)
  const head = code === "" ? "API error without errorCode" : code
  return entry.make({
    errorCode: code,
    message: `${head}: ${entry.explain}${said === "" ? "" : ` (service said: ${said})`}`,
    messages,
    data: failure.data
  })
}

/** Whether the same call can succeed later without a person acting. */
export const isRetryable = (error: ApiError): boolean =>
  (Object.hasOwn(catalog, error.errorCode) ? catalog[error.errorCode]! : unknownEntry).retryable

/** What a person must do, if anything. */
export const requiredAction = (error: ApiError): Action =>
  (Object.hasOwn(catalog, error.errorCode) ? catalog[error.errorCode]! : unknownEntry).action

/** The errorCodes the API reference lists (common and page service). */
export const knownCodes: ReadonlyArray<string> = Object.keys(catalog)
