/**
 * One small Effect service around better-sqlite3 (synchronous) and drizzle: how every SQLite
 * file of the engine is opened (event log, Kafka outbox, read models, plugin store, rate-limit
 * store, tenant store).
 *
 * Opening creates a new file owner-only (mode 0600, see ./Connection.ts), sets the pragmas
 * durability needs (WAL, synchronous, busy_timeout, foreign keys) and runs drizzle migrations
 * from a folder; the handle is closed when the scope closes. Every call goes through `use` or
 * `transaction`, which turn thrown exceptions into a tagged `SqliteError`.
 *
 * `SqliteDatabase.make({ filename, migrationsFolder })` inside a scope, or
 * `SqliteDatabase.layer(...)` when one file per context is enough.
 */
import Database from "better-sqlite3"
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import { migrate } from "drizzle-orm/better-sqlite3/migrator"
import { Context, Effect, Layer, type Scope } from "effect"
import type { DiskProbe } from "./DiskProbe.ts"
import { applyPragmas, createPrivateFile, type PragmaOptions } from "./Connection.ts"
import { SqliteError } from "./SqliteError.ts"

export { SqliteError }

export interface SqliteOptions extends PragmaOptions {
  readonly filename: string
  /** drizzle-kit output folder to migrate with at open; omit to skip migrations. */
  readonly migrationsFolder?: string | undefined
  /** Opens an existing file for reading only (never created, no journal mode change). */
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

/**
 * Whether files opened without an explicit `exclusive` option use exclusive locking (see
 * `PragmaOptions.exclusive` in ./Connection.ts). A composition root provides it to the layers
 * whose files only this process opens (`Layer.provide(Layer.succeed(Locking, { exclusive: true }))`),
 * so a stalled disk cannot freeze the thread that reads them; read-only connections never take it.
 */
export const Locking = Context.Reference<{ readonly exclusive: boolean }>("@ocs/sqlite/SqliteDatabase/Locking", {
  defaultValue: () => ({ exclusive: false })
})

/**
 * Whether the disk under the files takes writes (./DiskProbe.ts gives one); by default it always
 * does. `use` and `transaction` first wait for a fresh probe and, when the disk does not
 * answer, fail with a `SqliteError` instead of touching the file: a write (and, through a
 * memory-mapped `-shm`, any access) would wait for the disk past every bound, on the calling
 * thread. An exclusive connection maps nothing and reads with plain `pread`, which a stalled disk
 * does not hold: its `use` still runs, under `query_only`, so reads answer and writes fail.
 */
export const DiskHealth = Context.Reference<Pick<DiskProbe, "ask">>("@ocs/sqlite/SqliteDatabase/DiskHealth", {
  defaultValue: () => ({ ask: (then) => then(true) })
})

const messageOf = (cause: unknown) => cause instanceof Error ? cause.message : String(cause)

/** Opens (creating if needed) and migrates a database file; closes it when the scope closes. */
export const make = Effect.fnUntraced(function*(options: SqliteOptions): Effect.fn.Return<Handle, SqliteError, Scope.Scope> {
  const filename = options.filename
  const readonly = options.readonly ?? false
  const exclusive = options.exclusive ?? (!readonly && (yield* Locking).exclusive)
  const disk = yield* DiskHealth
  const fail = (operation: string) => (cause: unknown) =>
    new SqliteError({ filename, operation, message: `${operation} on ${filename}: ${messageOf(cause)}`, cause })

  const client = yield* Effect.acquireRelease(
    Effect.try({
      try: () => {
        if (!readonly) createPrivateFile(filename)
        const db = new Database(filename, { readonly })
        try {
          applyPragmas(db, { ...options, exclusive })
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

  const stall = (operation: string) =>
    new SqliteError({ filename, operation, message: `${operation} on ${filename}: the disk is stalled (writes do not return); not touched until it answers`, cause: undefined })
  /** Runs `f` with the disk's answer, in the probe's reply handler (./DiskProbe.ts `ask`). */
  const touch = <A>(operation: string, f: (ok: boolean) => A): Effect.Effect<A, SqliteError> =>
    Effect.callback<A, SqliteError>((resume) => {
      let interrupted = false
      disk.ask((ok) => {
        // A fiber interrupted while it waited wants nothing done any more.
        if (interrupted) return
        try {
          resume(Effect.succeed(f(ok)))
        } catch (cause) {
          resume(Effect.fail(cause instanceof SqliteError ? cause : fail(operation)(cause)))
        }
      })
      return Effect.sync(() => {
        interrupted = true
      })
    })
  // An exclusive connection on a disk that does not answer still reads (with pread, which a
  // stalled disk does not hold); `query_only` turns any write it tries into an error at once.
  const readOnly = <A>(f: (db: BetterSQLite3Database, client: Database.Database) => A): A => {
    client.pragma("query_only = ON")
    try {
      return f(orm, client)
    } finally {
      client.pragma("query_only = OFF")
    }
  }
  const use = <A>(operation: string, f: (db: BetterSQLite3Database, client: Database.Database) => A) =>
    touch(operation, (ok) => {
      if (ok) return f(orm, client)
      if (exclusive) return readOnly(f)
      throw stall(operation)
    })
  const transaction = <A>(operation: string, f: (db: BetterSQLite3Database, client: Database.Database) => A) =>
    touch(operation, (ok) => {
      if (!ok) throw stall(operation)
      return client.transaction(() => f(orm, client)).immediate()
    })

  return { filename, client, drizzle: orm, use, transaction }
})

export class SqliteDatabase extends Context.Service<SqliteDatabase, Handle>()("@ocs/sqlite/SqliteDatabase") {
  static readonly layer = (options: SqliteOptions) => Layer.effect(SqliteDatabase, make(options))
}
