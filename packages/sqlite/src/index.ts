export * as Connection from "./Connection.ts"
export * as DiskProbe from "./DiskProbe.ts"
export * as SqliteDatabase from "./SqliteDatabase.ts"
export { SqliteError } from "./SqliteError.ts"
