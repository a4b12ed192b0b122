/**
 * The writer's in-memory dedupe index: exact like the SQL it replaced, across reopening the
 * file, another process appending to it, the window's edge, and receivedAt values older than
 * what the index holds. Plus the table itself (digest collisions, eviction at resize).
 */
import { assert, describe, it } from "@effect/vitest"
import { type EventLog, SqliteEventLog } from "@ocs/event-log"
import { SqliteDatabase } from "@ocs/sqlite"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { DedupeIndex, makeDigester } from "../src/internal/dedupeIndex.ts"
import { APP, tempDir, webhook } from "./helpers.ts"

const HOUR = 60 * 60 * 1000

const withLog = <A, E>(filename: string, f: (log: EventLog.EventLogService) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.flatMap(SqliteEventLog.make({ filename, dedupeWindowMillis: HOUR }), f))

const tags = (results: ReadonlyArray<{ readonly _tag: string }>) => results.map((r) => r._tag)

describe("dedupe index (in the writer thread)", () => {
  it.live("survives reopening the file: the index is loaded from the records of the window", () => {
    const file = NodePath.join(tempDir(), "log.db")
    const now = Date.now()
    return Effect.gen(function*() {
      const first = yield* withLog(file, (log) => log.append([webhook("1", "{}", { dedupeKey: "a", receivedAt: now })]))
      const again = yield* withLog(file, (log) =>
        log.append([
          webhook("1", "{}", { dedupeKey: "a", receivedAt: now + 1 }),
          webhook("2", "{}", { dedupeKey: "a", receivedAt: now + 1 })
        ]))
      assert.deepStrictEqual(tags(again), ["Duplicate", "Appended"])
      assert.strictEqual(again[0]!.offset, first[0]!.offset)
      assert.strictEqual(again[0]!.id, first[0]!.id)
    })
  })

  it.live("sees what another writer of the same file appended", () => {
    const file = NodePath.join(tempDir(), "log.db")
    const now = Date.now()
    return Effect.scoped(Effect.gen(function*() {
      const a = yield* SqliteEventLog.make({ filename: file, dedupeWindowMillis: HOUR })
      const b = yield* SqliteEventLog.make({ filename: file, dedupeWindowMillis: HOUR })
      const [fromA] = yield* a.append([webhook("1", "{}", { dedupeKey: "k", receivedAt: now })])
      const [fromB] = yield* b.append([webhook("1", "{}", { dedupeKey: "k", receivedAt: now + 2 })])
      assert.strictEqual(fromB!._tag, "Duplicate")
      assert.strictEqual(fromB!.offset, fromA!.offset)
      const [fromB2] = yield* b.append([webhook("1", "{}", { dedupeKey: "k2", receivedAt: now + 3 })])
      const [fromA2] = yield* a.append([webhook("1", "{}", { dedupeKey: "k2", receivedAt: now + 4 })])
      assert.strictEqual(fromA2!._tag, "Duplicate")
      assert.strictEqual(fromA2!.offset, fromB2!.offset)
    }))
  })

  it.live("a key is new again once its record left the window, then a duplicate of the new one", () => {
    const file = NodePath.join(tempDir(), "log.db")
    const now = Date.now()
    return withLog(file, (log) =>
      Effect.gen(function*() {
        const [first] = yield* log.append([webhook("1", "{}", { dedupeKey: "w", receivedAt: now })])
        const [edge] = yield* log.append([webhook("1", "{}", { dedupeKey: "w", receivedAt: now + HOUR })])
        assert.strictEqual(edge!._tag, "Duplicate", "exactly one window later is still inside it")
        const [late] = yield* log.append([webhook("1", "{}", { dedupeKey: "w", receivedAt: now + HOUR + 1 })])
        assert.strictEqual(late!._tag, "Appended")
        const [again] = yield* log.append([webhook("1", "{}", { dedupeKey: "w", receivedAt: now + HOUR + 2 })])
        assert.deepStrictEqual([again!._tag, again!.offset], ["Duplicate", late!.offset])
        assert.notStrictEqual(late!.offset, first!.offset)
      }))
  })

  it.live("within one transaction, the second of two equal keys is the duplicate", () => {
    const file = NodePath.join(tempDir(), "log.db")
    return withLog(file, (log) =>
      Effect.gen(function*() {
        const results = yield* log.append([webhook("1", "{}", { dedupeKey: "t" }), webhook("1", "{}", { dedupeKey: "t" })])
        assert.deepStrictEqual(tags(results), ["Appended", "Duplicate"])
        assert.strictEqual(results[1]!.offset, results[0]!.offset)
      }))
  })

  it.live("a receivedAt older than the index reaches is judged by SQLite, exactly", () => {
    const file = NodePath.join(tempDir(), "log.db")
    const past = Date.now() - 30 * 24 * HOUR
    return Effect.gen(function*() {
      const [first] = yield* withLog(file, (log) => log.append([webhook("1", "{}", { dedupeKey: "old", receivedAt: past })]))
      // Reopened: the index holds only the last hour, the record above is not in it.
      yield* withLog(file, (log) =>
        Effect.gen(function*() {
          const [second] = yield* log.append([webhook("1", "{}", { dedupeKey: "old", receivedAt: past + 10 })])
          assert.deepStrictEqual([second!._tag, second!.offset], ["Duplicate", first!.offset])
          const [other] = yield* log.append([webhook("1", "{}", { dedupeKey: "old", receivedAt: past + 2 * HOUR })])
          assert.strictEqual(other!._tag, "Appended")
        }))
      const decisions = yield* Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename: file }), (db) =>
        db.use("decisions", (_, c) => c.prepare("SELECT count(*) AS n FROM dedupe_decisions").get() as { n: number })))
      assert.strictEqual(decisions.n, 1)
    })
  })
})

/** A copy of the log's migrations up to `tag` (the schema of an earlier release). */
const migrationsUpTo = (tag: string): string => {
  const dir = tempDir("migrations-")
  const journal = JSON.parse(NodeFs.readFileSync(NodePath.join(SqliteEventLog.migrationsFolder, "meta", "_journal.json"), "utf8")) as {
    entries: Array<{ tag: string }>
  }
  const entries = journal.entries.slice(0, journal.entries.findIndex((e) => e.tag === tag) + 1)
  NodeFs.mkdirSync(NodePath.join(dir, "meta"))
  NodeFs.writeFileSync(NodePath.join(dir, "meta", "_journal.json"), JSON.stringify({ ...journal, entries }))
  for (const e of entries) NodeFs.copyFileSync(NodePath.join(SqliteEventLog.migrationsFolder, `${e.tag}.sql`), NodePath.join(dir, `${e.tag}.sql`))
  return dir
}

describe("dedupe index over a file from an earlier release", () => {
  it.live("tenant-first time indexes are replaced at open, and the window still deduplicates", () => {
    const file = NodePath.join(tempDir(), "log.db")
    const now = Date.now()
    const indexes = (c: { prepare: (sql: string) => { all: () => Array<unknown> } }) =>
      (c.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records' AND sql IS NOT NULL ORDER BY name").all() as Array<
        { name: string }
      >).map((r) => r.name)
    return Effect.gen(function*() {
      // Written by the schema of migration 0001, before the writer looked up time ranges by time first.
      const before = yield* Effect.scoped(Effect.flatMap(
        SqliteDatabase.make({ filename: file, migrationsFolder: migrationsUpTo("0001_drop-dedupe-key-index") }),
        (db) =>
          db.use("seed", (_, c) => {
            c.prepare(
              `INSERT INTO records (id, tenant, app_id, business_id, source, type, received_at, body, dedupe_key, meta, entity_id)
               VALUES ('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', ?, ?, '1', 'webhook', 'orderAdd', ?, '{}', 'a', '{}', '42')`
            ).run(`${APP}:1`, APP, now)
            return indexes(c)
          })
      ))
      assert.deepStrictEqual(before, ["records_id", "records_tenant_entity", "records_tenant_offset", "records_tenant_received", "records_tenant_type_received"])
      const again = yield* withLog(file, (log) =>
        log.append([
          webhook("1", "{}", { dedupeKey: "a", receivedAt: now + 1 }),
          webhook("2", "{}", { dedupeKey: "a", receivedAt: now + 1 })
        ]))
      assert.deepStrictEqual(tags(again), ["Duplicate", "Appended"])
      assert.deepStrictEqual([again[0]!.offset, again[0]!.id], [1, "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"])
      const after = yield* Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename: file }), (db) => db.use("indexes", (_, c) => indexes(c))))
      assert.deepStrictEqual(after, ["records_id", "records_received_tenant", "records_tenant_offset"])
    })
  })
})

describe("DedupeIndex (the table)", () => {
  const digest = makeDigester()

  it("digests: deterministic per seed, different across seeds, the pair's boundary counts", () => {
    const a = makeDigester(new Uint32Array([1, 2]))
    const b = makeDigester(new Uint32Array([1, 3]))
    assert.deepStrictEqual(a("1001:1", "sha256:ab"), a("1001:1", "sha256:ab"))
    assert.notDeepEqual(a("1001:1", "sha256:ab"), b("1001:1", "sha256:ab"))
    assert.notDeepEqual(a("a", "bc"), a("ab", "c"))
    assert.notDeepEqual(a("t", ""), a("", "t"))
    // 200,000 realistic pairs (one tenant, sequential keys and their digests): no 64-bit
    // digest repeats, and the low bits that pick a slot are spread evenly.
    const seen = new Set<string>()
    const buckets = new Uint32Array(1024)
    for (let i = 0; i < 200_000; i++) {
      const d = a("1001:9007199254740993", i % 2 === 0 ? `k${i}` : `sha256:${i.toString(16).padStart(64, "0")}`)
      seen.add(`${d.hi}:${d.lo}`)
      buckets[d.lo & 1023]!++
    }
    assert.strictEqual(seen.size, 200_000)
    // Expected 195 per bucket; a fair spread stays well within +-40 %.
    for (const n of buckets) assert.isTrue(n > 117 && n < 273, `bucket of ${n}`)
  })

  it("keeps every entry of equal digests, so a collision is told apart by the caller", () => {
    const index = new DedupeIndex(HOUR, 0)
    const d = digest("1001:1", "x")
    index.put(d, { offset: 1, receivedAt: 10 }, undefined)
    index.put(d, { offset: 2, receivedAt: 11 }, undefined)
    assert.deepStrictEqual(index.candidates(d).map((c) => c.offset), [1, 2])
    index.put(d, { offset: 3, receivedAt: 12 }, 1)
    assert.deepStrictEqual(index.candidates(d).map((c) => c.offset), [3, 2])
    assert.deepStrictEqual(index.candidates(digest("1001:1", "y")), [])
  })

  it("drops what left the window when it resizes, and moves its horizon", () => {
    const index = new DedupeIndex(1000, 0)
    for (let i = 1; i <= 5000; i++) index.put(digest("t", `k${i}`), { offset: i, receivedAt: i }, undefined)
    assert.isAtMost(index.size, 5000)
    assert.isAtLeast(index.horizon, 1)
    // Everything inside the window of the newest entry is still there.
    for (let i = 4001; i <= 5000; i++) {
      assert.deepStrictEqual(index.candidates(digest("t", `k${i}`)).map((c) => c.offset), [i])
    }
    // And what was dropped is below the horizon.
    for (let i = 1; i <= 5000; i++) {
      if (index.candidates(digest("t", `k${i}`)).length === 0) assert.isBelow(i, index.horizon)
    }
    assert.isAtMost(index.capacity, 4096)
  })
})
