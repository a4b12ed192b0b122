/**
 * Failures below the API: the request did not get a usable answer.
 */
import { Schema } from "effect"

/** No answer within the request timeout. Retried with backoff. */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", {
  operation: Schema.String,
  timeoutMs: Schema.Number,
  message: Schema.String
}) {}

/** The connection failed or was reset. Retried with backoff. */
export class ConnectionFailed extends Schema.TaggedError<ConnectionFailed>()("ConnectionFailed", {
  operation: Schema.String,
  reason: Schema.Literals(["reset", "refused", "other"]),
  message: Schema.String
}) {}

/** A 5xx answer that is not an API envelope. Retried with backoff. */
export class ServerError extends Schema.TaggedError<ServerError>()("ServerError", {
  operation: Schema.String,
  status: Schema.Number,
  excerpt: Schema.String,
  message: Schema.String
}) {}

/** A page repeated its own cursor without records too many times: the server is not advancing. */
export class CursorStalled extends Schema.TaggedError<CursorStalled>()("CursorStalled", {
  operation: Schema.String,
  cursor: Schema.String,
  repeats: Schema.Number,
  message: Schema.String
}) {}

/** A record of a list page does not match the operation's record schema. */
export class RecordDecodeError extends Schema.TaggedError<RecordDecodeError>()("RecordDecodeError", {
  operation: Schema.String,
  index: Schema.Number,
  message: Schema.String
}) {}

export type TransportError = RequestTimeout | ConnectionFailed | ServerError

export const isTransient = (e: { readonly _tag: string }): boolean =>
  e._tag === "RequestTimeout" || e._tag === "ConnectionFailed" || e._tag === "ServerError"
