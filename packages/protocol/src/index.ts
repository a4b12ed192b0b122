/**
 * @ocs/protocol: the Open Commerce Service API v3.0, as pure schemas and functions (no I/O).
 */
export * as ApiError from "./ApiError.ts"
export * as Catalogue from "./Catalogue.ts"
export * as CommandKind from "./CommandKind.ts"
export * as DomainEvent from "./DomainEvent.ts"
export * as EngineRecord from "./EngineRecord.ts"
export * as EngineRecordCommands from "./EngineRecordCommands.ts"
export * as Envelope from "./Envelope.ts"
export * as Ids from "./Ids.ts"
export * as Json from "./Json.ts"
export * as Operation from "./Operation.ts"
export * as Paginator from "./Paginator.ts"
export * as ReadQueries from "./ReadQueries.ts"
export * as Records from "./Records.ts"
export * as Warning from "./Warning.ts"
export * as Webhook from "./Webhook.ts"

/** The API version this package speaks (docs/api-catalogue.md, Versioning 1: part of the URL path). */
export const API_VERSION = "3.0"
