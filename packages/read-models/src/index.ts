/**
 * @ocs/read-models: read models projected from the event log into SQLite (docs/architecture.md §3).
 */
export * as Quarantine from "./Quarantine.ts"
export * as ReadApi from "./ReadApi.ts"
export * as ReadModels from "./ReadModels.ts"
export * as ReadModelsError from "./ReadModelsError.ts"
export * as ReadModelsOptions from "./ReadModelsOptions.ts"
export * as Tables from "./Tables.ts"
export * as UpdatedAt from "./UpdatedAt.ts"
export * as Views from "./Views.ts"
