import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Fiber } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Connection, DiskProbe, SqliteDatabase, SqliteError } from "@ocs/sqlite"

const tempDir = () => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "ocs-sqlite-"))

const modeOf = (path: string) => NodeFs.statSync(path).mode & 0o777

/** A drizzle-kit migrations folder, written the way `drizzle-kit generate` writes one. */
const migrations = (dir: string, entries: ReadonlyArray<{ readonly tag: string; readonly sql: string }>) => {
  const folder = NodePath.join(dir, "drizzle")
  NodeFs.mkdirSync(NodePath.join(folder, "meta"), { recursive: true })
  const journal = {
    version: "7",
    dialect: "sqlite",
    entries: entries.map((e, idx) => ({ idx, version: "6", when: 1_700_000_000_000 + idx, tag: e.tag, breakpoints: true }))
  }
  NodeFs.writeFileSync(NodePath.join(folder, "meta", "_journal.json"), JSON.stringify(journal))
  for (const e of entries) NodeFs.writeFileSync(NodePath.join(folder, `${e.tag}.sql`), e.sql)
  return folder
}

const pragmas = (client: Database.Database) => ({
  journal: client.pragma("journal_mode", { simple: true }),
  synchronous: client.pragma("synchronous", { simple: true }),
  busyTimeout: client.pragma("busy_timeout", { simple: true }),
  foreignKeys: client.pragma("foreign_keys", { simple: true })
})

describe("SqliteDatabase.make", () => {
  it.effect("exclusive: WAL without a -shm file (nothing memory-mapped), and no second connection while open", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const filename = NodePath.join(dir, "x.db")
      const shared = NodePath.join(dir, "shared.db")
      yield* Effect.scoped(Effect.gen(function*() {
        const db = yield* SqliteDatabase.make({ filename, exclusive: true })
        const journal = yield* db.use("write", (_, c) => {
          c.exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)")
          return c.pragma("journal_mode", { simple: true })
        })
        assert.strictEqual(journal, "wal")
        assert.isTrue(NodeFs.existsSync(`${filename}-wal`), "the WAL is in use")
        assert.isFalse(NodeFs.existsSync(`${filename}-shm`), "no shared-memory file")
        const other = new Database(filename, { timeout: 0 })
        try {
          assert.throws(() => other.prepare("SELECT count(*) FROM t").get(), /locked|busy/i)
        } finally {
          other.close()
        }
        // The default keeps the shared-memory index (several connections may open the file).
        const plain = yield* SqliteDatabase.make({ filename: shared })
        yield* plain.use("write", (_, c) => c.exec("CREATE TABLE t (x INTEGER)"))
        assert.isTrue(NodeFs.existsSync(`${shared}-shm`))
      }))
      // Closed: the file is whole and anyone may open it again.
      const again = new Database(filename, { readonly: true })
      try {
        assert.strictEqual((again.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n, 1)
      } finally {
        again.close()
      }
    }))

  it.effect("Locking: files opened where exclusive locking is provided take it, read-only and explicit ones do not", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const inherited = NodePath.join(dir, "inherited.db")
      const explicit = NodePath.join(dir, "explicit.db")
      yield* Effect.scoped(Effect.gen(function*() {
        const a = yield* SqliteDatabase.make({ filename: inherited })
        yield* a.use("write", (_, c) => c.exec("CREATE TABLE t (x INTEGER)"))
        const b = yield* SqliteDatabase.make({ filename: explicit, exclusive: false })
        yield* b.use("write", (_, c) => c.exec("CREATE TABLE t (x INTEGER)"))
        assert.isFalse(NodeFs.existsSync(`${inherited}-shm`), "exclusive from the context: no shared-memory file")
        assert.isTrue(NodeFs.existsSync(`${explicit}-shm`), "an explicit option wins")
      }).pipe(Effect.provideService(SqliteDatabase.Locking, { exclusive: true })))
      // Read-only over a file another connection may hold: never exclusive.
      const writer = new Database(explicit)
      try {
        writer.pragma("journal_mode = WAL")
        yield* Effect.scoped(Effect.gen(function*() {
          const r = yield* SqliteDatabase.make({ filename: explicit, readonly: true })
          yield* r.use("read", (_, c) => c.prepare("SELECT count(*) FROM t").get())
          writer.exec("INSERT INTO t VALUES (1)")
        }).pipe(Effect.provideService(SqliteDatabase.Locking, { exclusive: true })))
      } finally {
        writer.close()
      }
    }))


  it.effect("DiskHealth: while the disk does not answer nothing writes, and nothing touches a shared file; an exclusive one still reads", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      let answers = true
      const disk = { ask: (then: (ok: boolean) => void) => then(answers) }
      yield* Effect.scoped(Effect.gen(function*() {
        const shared = yield* SqliteDatabase.make({ filename: NodePath.join(dir, "shared.db") })
        const own = yield* SqliteDatabase.make({ filename: NodePath.join(dir, "own.db"), exclusive: true })
        for (const db of [shared, own]) yield* db.transaction("write", (_, c) => c.exec("CREATE TABLE t (x INTEGER)"))
        const count = (db: SqliteDatabase.Handle) => db.use("read", (_, c) => (c.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n)
        answers = false
        const refused = yield* Effect.flip(shared.use("read", () => 1))
        assert.match(refused.message, /stalled/)
        assert.strictEqual(refused.operation, "read")
        assert.match((yield* Effect.flip(own.transaction("write", (_, c) => c.exec("INSERT INTO t VALUES (1)")))).message, /stalled/)
        assert.strictEqual(yield* count(own), 0, "an exclusive connection reads on")
        const write = yield* Effect.flip(own.use("write", (_, c) => c.exec("INSERT INTO t VALUES (1)")))
        assert.match(write.message, /readonly/i, "and its writes fail at once")
        answers = true
        yield* shared.transaction("write", (_, c) => c.exec("INSERT INTO t VALUES (1)"))
        assert.strictEqual(yield* count(shared), 1, "back once the disk answers")
      }).pipe(Effect.provideService(SqliteDatabase.DiskHealth, disk)))
    }))

  it.live("DiskHealth: a fiber interrupted while it waits for the disk writes nothing", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const held: Array<(ok: boolean) => void> = []
      yield* Effect.scoped(Effect.gen(function*() {
        const db = yield* SqliteDatabase.make({ filename: NodePath.join(dir, "x.db") })
        const waiting = yield* Effect.forkChild(db.transaction("write", (_, c) => c.exec("CREATE TABLE t (x INTEGER)")))
        yield* Effect.sleep(10)
        yield* Fiber.interrupt(waiting)
        assert.strictEqual(held.length, 1, "the transaction asked the disk")
        // The disk answers after the interruption: the transaction must not run.
        for (const then of held.splice(0)) then(true)
        const tables = new Database(NodePath.join(dir, "x.db"), { readonly: true })
        try {
          assert.strictEqual((tables.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 't'").get() as { n: number }).n, 0)
        } finally {
          tables.close()
        }
      }).pipe(Effect.provideService(SqliteDatabase.DiskHealth, { ask: (then: (ok: boolean) => void) => void held.push(then) })))
    }))

  it.live("DiskProbe: a disk that takes writes is not stalled", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = tempDir()
      // Returns once the worker runs and has opened its probe file.
      const probe = yield* DiskProbe.make({ folder: dir, intervalMillis: 10, stallAfterMillis: 5000 })
      assert.isTrue(NodeFs.existsSync(NodePath.join(dir, ".disk-probe")), "the worker writes its probe file")
      const answers = yield* Effect.all(Array.from({ length: 20 }, () => Effect.callback<boolean>((resume) => probe.ask((ok) => resume(Effect.succeed(ok))))), { concurrency: "unbounded" })
      assert.deepStrictEqual(answers, Array.from({ length: 20 }, () => true), "every question gets a fresh answer")
      assert.isFalse(probe.stalled())
    })), 10_000)

  it.live("DiskProbe: a main thread busy for longer than the bound is not a stalled disk", () =>
    Effect.scoped(Effect.gen(function*() {
      const probe = yield* DiskProbe.make({ folder: tempDir(), intervalMillis: 10, stallAfterMillis: 100 })
      const answered = yield* Effect.callback<boolean>((resume) => {
        probe.ask((ok) => resume(Effect.succeed(ok)))
        // The question is out; the thread that would read the answer is busy for 6 bounds.
        const until = performance.now() + 600
        while (performance.now() < until) {
          // busy
        }
      })
      assert.isTrue(answered, "the answer waited for the thread, the disk did not")
      assert.isFalse(probe.stalled())
      // And again with the timer due: the tick that runs first must not read the wait as a stall.
      const until = performance.now() + 600
      while (performance.now() < until) {
        // busy
      }
      yield* Effect.sleep(30)
      assert.isFalse(probe.stalled())
      assert.isTrue(yield* Effect.callback<boolean>((resume) => probe.ask((ok) => resume(Effect.succeed(ok)))))
    })), 10_000)

  it.live("DiskProbe: an answer read long after its write is not used; a fresh probe answers", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = tempDir()
      const probe = yield* DiskProbe.make({ folder: dir, intervalMillis: 10_000, stallAfterMillis: 5000, freshMillis: 20 })
      let busyFrom = 0
      const answeredBy = yield* Effect.callback<number>((resume) => {
        probe.ask(() => resume(Effect.succeed(NodeFs.statSync(NodePath.join(dir, ".disk-probe")).mtimeMs)))
        // The worker writes at once; this thread reads its answer 300 ms later.
        busyFrom = Date.now()
        while (Date.now() < busyFrom + 300) {
          // busy
        }
      })
      assert.isAbove(answeredBy, busyFrom + 150, "the write that let the access through came after the busy spell")
    })), 10_000)

  it.effect("applies the durability pragmas (FULL by default, the given level and busy timeout otherwise)", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const full = yield* Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename: NodePath.join(dir, "a.db") }), (db) => db.use("pragmas", (_, c) => pragmas(c))))
      assert.deepStrictEqual(full, { journal: "wal", synchronous: 2, busyTimeout: 5000, foreignKeys: 1 })
      const normal = yield* Effect.scoped(Effect.flatMap(
        SqliteDatabase.make({ filename: NodePath.join(dir, "b.db"), synchronous: "NORMAL", busyTimeoutMillis: 250 }),
        (db) => db.use("pragmas", (_, c) => pragmas(c))
      ))
      assert.deepStrictEqual(normal, { journal: "wal", synchronous: 1, busyTimeout: 250, foreignKeys: 1 })
    }))

  it.effect("runs the migrations of a folder once, and the new ones at a later open", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const filename = NodePath.join(dir, "m.db")
      // Plain CREATE TABLE: running a migration twice would fail the open.
      const first = [{ tag: "0000_init", sql: "CREATE TABLE notes (id integer PRIMARY KEY, body text NOT NULL);" }]
      const opened = (migrationsFolder: string) =>
        Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename, migrationsFolder }), (db) =>
          db.transaction("write and read", (_, c) => {
            c.prepare("INSERT INTO notes (body) VALUES ('x')").run()
            return {
              notes: (c.prepare("SELECT count(*) AS n FROM notes").get() as { n: number }).n,
              columns: (c.prepare("SELECT name FROM pragma_table_info('notes') ORDER BY cid").all() as Array<{ name: string }>).map((r) => r.name),
              applied: (c.prepare("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n
            }
          })))
      assert.deepStrictEqual(yield* opened(migrations(NodePath.join(dir, "v1"), first)), { notes: 1, columns: ["id", "body"], applied: 1 })
      assert.deepStrictEqual(yield* opened(migrations(NodePath.join(dir, "v1"), first)), { notes: 2, columns: ["id", "body"], applied: 1 })
      const second = [...first, { tag: "0001_tags", sql: "ALTER TABLE notes ADD tag text;" }]
      assert.deepStrictEqual(yield* opened(migrations(NodePath.join(dir, "v2"), second)), { notes: 3, columns: ["id", "body", "tag"], applied: 2 })
    }))

  it.effect("turns exceptions into a tagged SqliteError that names the file and the operation", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const filename = NodePath.join(dir, "e.db")
      const caught = yield* Effect.scoped(Effect.gen(function*() {
        const db = yield* SqliteDatabase.make({ filename })
        yield* db.use("create", (_, c) => c.exec("CREATE TABLE t (v integer NOT NULL)"))
        const failed = yield* Effect.flip(db.transaction("insert two", (_, c) => {
          c.prepare("INSERT INTO t (v) VALUES (1)").run()
          c.prepare("INSERT INTO t (v) VALUES (NULL)").run()
        }))
        const rows = yield* db.use("count", (_, c) => (c.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n)
        // catchTag still reaches it by its tag.
        const recovered = yield* db.use("bad sql", (_, c) => c.exec("SELEKT 1")).pipe(
          Effect.as("no error"),
          Effect.catchTag("SqliteError", (e) => Effect.succeed(e.operation))
        )
        return { failed, rows, recovered }
      }))
      assert.instanceOf(caught.failed, SqliteError)
      assert.strictEqual(caught.failed._tag, "SqliteError")
      assert.strictEqual(caught.failed.filename, filename)
      assert.strictEqual(caught.failed.operation, "insert two")
      assert.match(caught.failed.message, /NOT NULL constraint failed/)
      assert.strictEqual(caught.rows, 0, "the transaction rolled back")
      assert.strictEqual(caught.recovered, "bad sql")

      const open = yield* Effect.flip(Effect.scoped(SqliteDatabase.make({ filename: NodePath.join(dir, "missing.db"), readonly: true })))
      assert.strictEqual(open.operation, "open")
      assert.isFalse(NodeFs.existsSync(NodePath.join(dir, "missing.db")), "a read-only open creates nothing")
      const migrate = yield* Effect.flip(Effect.scoped(SqliteDatabase.make({
        filename: NodePath.join(dir, "m.db"),
        migrationsFolder: migrations(dir, [{ tag: "0000_bad", sql: "CREATE TABLE (" }])
      })))
      assert.strictEqual(migrate._tag, "SqliteError")
      assert.strictEqual(migrate.operation, "migrate")
    }))

  it.effect("creates the database, its -wal and its -shm owner-only (0600)", () =>
    Effect.gen(function*() {
      const filename = NodePath.join(tempDir(), "nested", "private.db")
      yield* Effect.scoped(Effect.gen(function*() {
        const db = yield* SqliteDatabase.make({ filename })
        yield* db.use("write", (_, c) => {
          c.exec("CREATE TABLE secrets (token text)")
          c.prepare("INSERT INTO secrets VALUES ('s3cret')").run()
        })
        // While the connection is open, the WAL and the shared-memory index exist.
        for (const path of [filename, `${filename}-wal`, `${filename}-shm`]) {
          assert.isTrue(NodeFs.existsSync(path), path)
          assert.strictEqual(modeOf(path).toString(8), "600", path)
        }
      }))
      assert.strictEqual(modeOf(filename).toString(8), "600")
    }))

  it.effect("leaves the mode of a file that already exists alone", () =>
    Effect.gen(function*() {
      const filename = NodePath.join(tempDir(), "shared.db")
      NodeFs.writeFileSync(filename, "")
      NodeFs.chmodSync(filename, 0o640)
      yield* Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename }), (db) => db.use("write", (_, c) => c.exec("CREATE TABLE t (v)"))))
      assert.strictEqual(modeOf(filename).toString(8), "640")
    }))
})

describe("Connection.applyPragmas (a raw connection, as the event log's writer thread has)", () => {
  it("sets the same pragmas, with the caller's synchronous level and busy timeout", () => {
    const filename = NodePath.join(tempDir(), "raw.db")
    Connection.createPrivateFile(filename)
    const client = new Database(filename)
    try {
      Connection.applyPragmas(client, { synchronous: "NORMAL", busyTimeoutMillis: 1234 })
      assert.deepStrictEqual(pragmas(client), { journal: "wal", synchronous: 1, busyTimeout: 1234, foreignKeys: 1 })
      Connection.applyPragmas(client)
      assert.deepStrictEqual(pragmas(client), { journal: "wal", synchronous: 2, busyTimeout: 5000, foreignKeys: 1 })
    } finally {
      client.close()
    }
    assert.strictEqual(modeOf(filename).toString(8), "600")
  })

  it("on a read-only connection, keeps the journal mode of the file", () => {
    const filename = NodePath.join(tempDir(), "ro.db")
    const writer = new Database(filename)
    writer.exec("CREATE TABLE t (v)")
    writer.close()
    const reader = new Database(filename, { readonly: true })
    try {
      Connection.applyPragmas(reader)
      assert.strictEqual(reader.pragma("journal_mode", { simple: true }), "delete")
      assert.strictEqual(reader.pragma("foreign_keys", { simple: true }), 1)
    } finally {
      reader.close()
    }
  })
})
