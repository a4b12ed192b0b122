/**
 * One small Effect service around better-sqlite3 (synchronous) and drizzle.
 *
 * Opening sets the pragmas durability needs (WAL, synchronous, busy_timeout) and runs drizzle
 * migrations from a folder; the handle is closed when the scope closes. Every call goes through
 * `use` or `transaction`, which turn thrown exceptions into a tagged `SqliteError`.
 *
 * Read models reuse it for their own files: `SqliteDatabase.make({ filename, migrationsFolder })`
 * inside a scope, or `SqliteDatabase.layer(...)` when one file per context is enough.
 */
import Database from "better-sqlite3"
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import { migrate } from "drizzle-orm/better-sqlite3/migrator"
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

export class SqliteError extends Schema.TaggedError<SqliteError>()("SqliteError", {
  filename: Schema.String,
  operation: Schema.String,
  message: Schema.String,
  cause: Schema.Defect()
}) {}

export interface SqliteOptions {
  readonly filename: string
  /** drizzle-kit output folder to migrate with at open; omit to skip migrations. */
  readonly migrationsFolder?: string | undefined
  /**
   * "FULL" (default) fsyncs the WAL at every commit: an acknowledged transaction survives power
   * loss. "NORMAL" in WAL mode survives a process crash but may lose the last commits on power
   * loss; only choose it when the caller does not promise durability after ack.
   */
  readonly synchronous?: "FULL" | "NORMAL" | undefined
  /** How long a writer waits for another connection's lock before SQLITE_BUSY (default 5000). */
  readonly busyTimeoutMillis?: number | undefined
  readonly readonly?: boolean | undefined
}

export interface Handle {
  readonly filename: string
  /** The raw better-sqlite3 connection: use it inside `use`/`transaction` only. */
  readonly client: Database.Database
  readonly drizzle: BetterSQLite3Database
  /** Runs synchronous work on the connection; exceptions become `SqliteError`. */
  readonly use: <A>(operation: string, f: (db: BetterSQLite3Database, client: Database.Database) => A) => Effect.Effect<A, SqliteError>
  /** Same, inside `BEGIN IMMEDIATE ... COMMIT` (rolled back if `f` throws). */
  readonly transaction: <A>(operation: string, f: (db: BetterSQLite3Database, client: Database.Database) => A) => Effect.Effect<A, SqliteError>
}

const messageOf = (cause: unknown) => cause instanceof Error ? cause.message : String(cause)

/** Opens (creating if needed) and migrates a database file; closes it when the scope closes. */
export const make = Effect.fnUntraced(function*(options: SqliteOptions): Effect.fn.Return<Handle, SqliteError, Scope.Scope> {
  const filename = options.filename
  const fail = (operation: string) => (cause: unknown) =>
    new SqliteError({ filename, operation, message: `${operation} on ${filename}: ${messageOf(cause)}`, cause })

  const client = yield* Effect.acquireRelease(
    Effect.try({
      try: () => {
        if (filename !== ":memory:") NodeFs.mkdirSync(NodePath.dirname(NodePath.resolve(filename)), { recursive: true })
        const db = new Database(filename, { readonly: options.readonly ?? false })
        try {
          if (!(options.readonly ?? false)) db.pragma("journal_mode = WAL")
          db.pragma(`synchronous = ${options.synchronous ?? "FULL"}`)
          db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMillis ?? 5000))}`)
          db.pragma("foreign_keys = ON")
        } catch (cause) {
          db.close()
          throw cause
        }
        return db
      },
      catch: fail("open")
    }),
    (db) => Effect.sync(() => db.close())
  )
  const orm = drizzle({ client })

  if (options.migrationsFolder !== undefined) {
    const migrationsFolder = options.migrationsFolder
    yield* Effect.try({ try: () => migrate(orm, { migrationsFolder }), catch: fail("migrate") })
  }

  const use = <A>(operation: string, f: (db: BetterSQLite3Database, client: Database.Database) => A) =>
    Effect.try({ try: () => f(orm, client), catch: fail(operation) })
  const transaction = <A>(operation: string, f: (db: BetterSQLite3Database, client: Database.Database) => A) =>
    Effect.try({ try: () => client.transaction(() => f(orm, client)).immediate(), catch: fail(operation) })

  return { filename, client, drizzle: orm, use, transaction }
})

export class SqliteDatabase extends Context.Service<SqliteDatabase, Handle>()("@ocs/event-log/SqliteDatabase") {
  static readonly layer = (options: SqliteOptions) => Layer.effect(SqliteDatabase, make(options))
}
