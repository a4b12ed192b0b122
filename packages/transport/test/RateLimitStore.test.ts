import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { RateLimitStore } from "../src/RateLimitStore.ts"

const tempFile = () => Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-ratelimit-")), "limits.sqlite")

const withStore = <A, E>(filename: string, f: (store: RateLimitStore["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(RateLimitStore, f).pipe(Effect.provide(RateLimitStore.layerSqlite({ filename })))

describe("RateLimitStore (SQLite)", () => {
  it.effect("keeps locks and in-window calls across a reopen; unknown completions count as now", () =>
    Effect.gen(function*() {
      const filename = tempFile()
      yield* withStore(filename, (store) =>
        Effect.gen(function*() {
          yield* store.write({
            grants: [
              { id: 1, key: "a", limit: 10, windowMs: 1000, at: 1000 },
              { id: 2, key: "a", limit: 10, windowMs: 1000, at: 1100 },
              { id: 3, key: "b", limit: 5, windowMs: 1000, at: 100 }
            ],
            completions: [{ id: 1, at: 1050 }, { id: 3, at: 150 }]
          })
          yield* store.lock("c", 99_000)
          yield* store.lock("c", 50_000) // never shortens a lock
        }))
      const loaded = yield* withStore(filename, (store) => store.load(1900))
      const byKey = Object.fromEntries(loaded.map((k) => [k.key, k]))
      assert.deepStrictEqual(byKey["a"]!.completions, [1050, 1900])
      assert.strictEqual(byKey["b"], undefined, "b's only call left the window")
      assert.strictEqual(byKey["c"]!.lockedUntil, 99_000)
    }))
})

describe("RateLimitStore (SQLite) over a file from an earlier release", () => {
  it.effect("opens a file whose tables were created inline, keeps its rows, and adds the migration record", () =>
    Effect.gen(function*() {
      const filename = tempFile()
      // The DDL the store ran at every open before it had migrations.
      const old = new Database(filename)
      old.pragma("journal_mode = WAL")
      old.exec(`
        CREATE TABLE IF NOT EXISTS rate_keys (
          key TEXT PRIMARY KEY,
          limit_requests INTEGER NOT NULL,
          window_ms INTEGER NOT NULL,
          locked_until INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS rate_calls (
          session TEXT NOT NULL,
          id INTEGER NOT NULL,
          key TEXT NOT NULL,
          granted_at INTEGER NOT NULL,
          completed_at INTEGER,
          PRIMARY KEY (session, id)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS rate_calls_by_key ON rate_calls (key, completed_at);
        INSERT INTO rate_keys VALUES ('a', 10, 1000, 0), ('c', 0, 0, 99000);
        INSERT INTO rate_calls VALUES ('earlier-run', 1, 'a', 1000, 1050), ('earlier-run', 2, 'a', 1100, NULL);
      `)
      old.close()

      const loaded = yield* withStore(filename, (store) =>
        Effect.gen(function*() {
          const before = yield* store.load(1900)
          // The store writes to the old tables as to new ones.
          yield* store.write({ grants: [{ id: 1, key: "a", limit: 10, windowMs: 1000, at: 1800 }], completions: [{ id: 1, at: 1850 }] })
          return before
        }))
      const byKey = Object.fromEntries(loaded.map((k) => [k.key, k]))
      assert.deepStrictEqual(byKey["a"]!.completions, [1050, 1900])
      assert.strictEqual(byKey["c"]!.lockedUntil, 99_000)
      const again = yield* withStore(filename, (store) => store.load(1900))
      assert.deepStrictEqual([...Object.fromEntries(again.map((k) => [k.key, k]))["a"]!.completions].sort(), [1050, 1850, 1900])

      const check = new Database(filename, { readonly: true })
      try {
        assert.strictEqual((check.prepare("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n, 1)
        assert.strictEqual((check.prepare("SELECT count(*) AS n FROM rate_calls").get() as { n: number }).n, 3)
      } finally {
        check.close()
      }
    }))

  it.effect("creates new files owner-only, with the same WITHOUT ROWID tables", () =>
    Effect.gen(function*() {
      const filename = tempFile()
      yield* withStore(filename, (store) => store.lock("k", 5))
      assert.strictEqual((Fs.statSync(filename).mode & 0o777).toString(8), "600")
      const check = new Database(filename, { readonly: true })
      try {
        const ddl = check.prepare("SELECT name, sql FROM sqlite_master WHERE name IN ('rate_keys', 'rate_calls') ORDER BY name").all() as Array<{ name: string; sql: string }>
        assert.deepStrictEqual(ddl.map((t) => [t.name, t.sql.endsWith("WITHOUT ROWID")]), [["rate_calls", true], ["rate_keys", true]])
      } finally {
        check.close()
      }
    }))
})
