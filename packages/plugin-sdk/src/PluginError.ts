/**
 * Failures of the SDK, one tagged error per thing a caller can act on.
 */
import { Schema } from "effect"

/** A plugin's `sdkVersion` range does not include the running SDK: it is refused, not loaded. */
export class SdkVersionMismatch extends Schema.TaggedError<SdkVersionMismatch>()("SdkVersionMismatch", {
  plugin: Schema.String,
  required: Schema.String,
  sdkVersion: Schema.String,
  message: Schema.String
}) {}

/** A plugin module could not be resolved, imported, or has no plugin as default export. */
export class PluginLoadError extends Schema.TaggedError<PluginLoadError>()("PluginLoadError", {
  use: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/** The configuration given to a plugin does not decode with the plugin's config schema. */
export class InvalidPluginConfig extends Schema.TaggedError<InvalidPluginConfig>()("InvalidPluginConfig", {
  plugin: Schema.String,
  message: Schema.String
}) {}

/** Two plugins with one name: their checkpoints and stores would collide. */
export class DuplicatePlugin extends Schema.TaggedError<DuplicatePlugin>()("DuplicatePlugin", {
  plugin: Schema.String,
  message: Schema.String
}) {}

/** An admin call named a plugin the runtime does not run. */
export class UnknownPlugin extends Schema.TaggedError<UnknownPlugin>()("UnknownPlugin", {
  plugin: Schema.String,
  message: Schema.String
}) {}

/** A handler attempt failed (its error, a defect it threw, or the per-event timeout). */
export class HandlerFailed extends Schema.TaggedError<HandlerFailed>()("HandlerFailed", {
  plugin: Schema.String,
  eventId: Schema.String,
  attempt: Schema.Number,
  timedOut: Schema.Boolean,
  message: Schema.String
}) {}

/** The plugin store (plugins.sqlite: checkpoints, key-value, dead letters) failed. */
export class PluginStoreError extends Schema.TaggedError<PluginStoreError>()("PluginStoreError", {
  operation: Schema.String,
  message: Schema.String
}) {}

/** A read-model query of a plugin failed. */
export class QueryError extends Schema.TaggedError<QueryError>()("QueryError", {
  operation: Schema.String,
  message: Schema.String
}) {}

/** Outbound HTTP failed before an answer: timeout, refused connection, bad URL, not allowed. */
export class HttpError extends Schema.TaggedError<HttpError>()("HttpError", {
  url: Schema.String,
  reason: Schema.Literals(["Timeout", "Network", "NotAllowed"]),
  message: Schema.String
}) {}

/** Outbound HTTP answered with a status >= 400 (unless the request allowed error statuses). */
export class HttpStatusError extends Schema.TaggedError<HttpStatusError>()("HttpStatusError", {
  url: Schema.String,
  status: Schema.Number,
  body: Schema.String,
  message: Schema.String
}) {}

/** The plugin asked for an API call the runtime cannot make for this tenant. */
export class ApiUnavailable extends Schema.TaggedError<ApiUnavailable>()("ApiUnavailable", {
  appId: Schema.String,
  businessId: Schema.NullOr(Schema.String),
  message: Schema.String
}) {}

/**
 * A command was refused before anything was stored: its payload (each field by path), its key,
 * the tenant's grant (a permission or depot it lacks, `NotGranted`), or the copy (an order edit
 * the service would refuse, `PreconditionFailed`).
 */
export class CommandRefused extends Schema.TaggedError<CommandRefused>()("CommandRefused", {
  reason: Schema.Literals(["InvalidCommand", "IdempotencyKeyReused", "NotGranted", "PreconditionFailed", "Unavailable"]),
  issues: Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String })),
  message: Schema.String
}) {}
