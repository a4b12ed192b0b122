/**
 * @ocs/read-models/postgres: the read models in PostgreSQL (docs/architecture.md §4.34). A
 * subpath of its own, so that the SQLite default never loads the PostgreSQL client.
 */
export * as PostgresStore from "./PostgresStore.ts"
export * as PostgresTables from "./Tables.ts"
export * as PostgresReadApi from "./ReadApi.ts"
export * as PostgresQuarantine from "./Quarantine.ts"
