export { isEnvironmentError, type PostgresErrorKind, PostgresServerError } from "./PostgresError.ts"
export { createDatabaseAt, ensureBinaries, type PostgresServer, type StartOptions, startPostgres } from "./Server.ts"
