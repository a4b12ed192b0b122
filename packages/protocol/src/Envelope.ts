/**
 * The response envelope shared by every operation.
 *
 * docs/api-catalogue.md, Response envelope: `code` 1 (success) or 0 (failure); `data` optional; `warning`
 * (string, object or array) optional on success; `errorCode` and `messages` on failure; ERR_429
 * uses the singular `message`. A success may be only `{"code": 1}`.
 */
import { Result, Schema } from "effect"
import * as ApiError from "./ApiError.ts"
import * as Json from "./Json.ts"
import * as Warning from "./Warning.ts"

export const Envelope = Schema.Struct({
  code: Schema.Literals([0, 1]),
  data: Schema.optional(Schema.Unknown),
  warning: Schema.optional(Schema.Unknown),
  errorCode: Schema.optional(Schema.String),
  messages: Schema.optional(ApiError.Messages),
  message: Schema.optional(Schema.String)
})
export type Envelope = typeof Envelope.Type

/** A decoded success: the data, the warnings (normalised, raw kept) and the exact text. */
export interface Success {
  readonly data: unknown
  readonly warnings: ReadonlyArray<Warning.Warning>
  /** The body exactly as received. */
  readonly text: string
}

const decodeEnvelope = Schema.decodeUnknownResult(Envelope)

const EXCERPT = 200

const malformed = (text: string, message: string) =>
  new ApiError.MalformedResponse({
    message: `malformed response: ${message}`,
    excerpt: text.length > EXCERPT ? `${text.slice(0, EXCERPT)}...` : text
  })

/**
 * Decodes a response body. A success yields its data and warnings; a failure yields the typed
 * error of its errorCode; anything that is not an envelope yields `MalformedResponse`.
 */
export const decode = (text: string): Result.Result<Success, ApiError.ApiError | ApiError.MalformedResponse> => {
  const parsed = Json.parse(text)
  if (Result.isFailure(parsed)) return Result.fail(malformed(text, parsed.failure.message))
  const envelope = decodeEnvelope(parsed.success)
  if (Result.isFailure(envelope)) return Result.fail(malformed(text, envelope.failure.message))
  const e = envelope.success
  if (e.code === 0) return Result.fail(ApiError.fromFailure(e))
  return Result.succeed({ data: e.data, warnings: Warning.normalize(e.warning), text })
}

/** Encodes an envelope (used by the simulator and tests); bigints stay exact. */
export const encodeSuccess = (data?: unknown, warning?: unknown): string =>
  Json.stringify({ code: 1, data, warning })

export const encodeFailure = (failure: {
  readonly errorCode: string
  readonly messages?: ApiError.Messages | undefined
  readonly message?: string | undefined
  readonly data?: unknown
}): string => Json.stringify({ code: 0, ...failure })
