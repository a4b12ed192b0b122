/**
 * The read models in both stores, one test body each (docs/architecture.md §4.34): the SQLite
 * file and the PostgreSQL schema get the same records and must hold the same content (the same
 * digest, computed the same way), apply the same conflict rule and tombstones, apply each record
 * once, and a rebuild in one batch equals a live projection in small batches.
 */
import { assert, describe, it } from "@effect/vitest"
import { databaseOfFile, postgresUnavailable } from "@ocs/postgres-server/testing"
import { type LogRecord, SqliteEventLog } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import { PostgresStore } from "@ocs/read-models/postgres"
import { Effect, Option, type Scope } from "effect"
import { append, BIZ, files, mixedRecords, readLog, syncPage, tenant, webhook } from "../helpers.ts"

const database = databaseOfFile()

/** What the test body needs of a store. */
interface Store {
  readonly project: (records: ReadonlyArray<LogRecord.LogRecord>) => Effect.Effect<void, unknown>
  readonly digest: Effect.Effect<{ readonly digest: string; readonly tables: Readonly<Record<string, { readonly sha256: string; readonly rows: number }>> }, unknown>
  readonly product: (id: string) => Effect.Effect<{ readonly name: string | null; readonly deleted: boolean; readonly lastSource: string } | undefined, unknown>
}

let schemas = 0

const stores: ReadonlyArray<readonly [string, () => Effect.Effect<Store, unknown, Scope.Scope>]> = [
  ["sqlite", () =>
    Effect.gen(function*() {
      const rm = yield* ReadModels.make({ filename: files().rm, detectChanges: false })
      return {
        project: (records) => Effect.asVoid(rm.project(records)),
        digest: rm.digest(),
        product: (id) => Effect.map(rm.product(tenant, id), Option.match({ onNone: () => undefined, onSome: (p) => ({ name: p.name, deleted: p.deleted, lastSource: p.lastSource }) }))
      } satisfies Store
    })],
  ["postgres", () =>
    Effect.gen(function*() {
      const pg = yield* PostgresStore.make({ url: database(), schema: `s${schemas++}`, pool: 2 })
      return {
        project: (records) => Effect.asVoid(pg.project(records)),
        digest: pg.digest,
        product: (id) =>
          Effect.map(
            pg.query<{ name: string | null; deleted: number; last_source: string }>(
              "SELECT name, deleted, last_source FROM products WHERE app_id = $1 AND business_id = $2 AND id = $3",
              [tenant.appId, tenant.businessId, id]
            ),
            (rows) => rows[0] === undefined ? undefined : { name: rows[0].name, deleted: rows[0].deleted === 1, lastSource: rows[0].last_source }
          )
      } satisfies Store
    })]
]

/** The records as the log hands them over (offsets, received times), from a real SQLite log. */
const logged = (records: ReadonlyArray<LogRecord.NewRecord>) =>
  Effect.suspend(() =>
    Effect.gen(function*() {
      yield* append(records)
      return yield* readLog
    }).pipe(Effect.provide(SqliteEventLog.layer({ filename: files().log }))))

const inBatches = (store: Store, records: ReadonlyArray<LogRecord.LogRecord>, size: number) =>
  Effect.forEach(Array.from({ length: Math.ceil(records.length / size) }, (_, i) => records.slice(i * size, (i + 1) * size)), store.project, { discard: true })

const T1 = "2024-01-01T00:00:00Z"
const T2 = "2024-01-02T00:00:00Z"

/** One log for both stores: the very same records (ids, offsets, times). */
let mixedLog: ReadonlyArray<LogRecord.LogRecord> | undefined
const mixed = Effect.suspend(() =>
  mixedLog !== undefined ? Effect.succeed(mixedLog) : Effect.tap(logged(mixedRecords(1200, 5)), (records) => Effect.sync(() => (mixedLog = records)))
)

describe.skipIf(postgresUnavailable())("read models in both stores", () => {
  const digests: Record<string, unknown> = {}

  for (const [name, open] of stores) {
    it.live(`${name}: a rebuild in one batch equals the live projection in small batches, and a redelivery changes nothing`, () =>
      Effect.gen(function*() {
        const records = yield* mixed
        const live = yield* open()
        yield* inBatches(live, records, 20)
        const rebuilt = yield* open()
        yield* rebuilt.project(records)
        const a = yield* live.digest
        const b = yield* rebuilt.digest
        assert.deepStrictEqual(b.tables, a.tables)
        assert.isAbove(a.tables["products"]!.rows, 50)
        assert.isAbove(a.tables["order_items"]!.rows, 10)
        // every record again, in other batches: applied once, so nothing moves
        yield* inBatches(live, records, 100)
        assert.strictEqual((yield* live.digest).digest, a.digest)
        digests[name] = a.tables
      }).pipe(Effect.scoped), 120_000)

    it.live(`${name}: newer updatedAt wins, else log order; a delete is a tombstone a stale page cannot undo`, () =>
      Effect.gen(function*() {
        const store = yield* open()
        const records = yield* logged([
          webhook(BIZ, "productUpdate", { id: 1, name: "from webhook", updatedAt: T2 }),
          syncPage(BIZ, "product", [{ id: 1, name: "stale page", updatedAt: T1 }]),
          webhook(BIZ, "productUpdate", { id: 2, name: "newer", updatedAt: T2 }),
          webhook(BIZ, "productUpdate", { id: 2, name: "older, delivered late", updatedAt: T1 }),
          syncPage(BIZ, "product", [{ id: 3, name: "three", updatedAt: T1 }]),
          webhook(BIZ, "productDelete", [3]),
          syncPage(BIZ, "product", [{ id: 3, name: "three, stale", updatedAt: T1 }]),
          syncPage(BIZ, "product", [{ id: 4, name: "no time" }]),
          syncPage(BIZ, "product", [{ id: 4, name: "no time, later" }])
        ])
        // one batch holds the whole story: the rule must hold within a batch too
        yield* store.project(records)
        assert.deepStrictEqual(yield* store.product("1"), { name: "from webhook", deleted: false, lastSource: "webhook" })
        assert.strictEqual((yield* store.product("2"))?.name, "newer")
        assert.deepStrictEqual(yield* store.product("3"), { name: null, deleted: true, lastSource: "webhook" })
        assert.strictEqual((yield* store.product("4"))?.name, "no time, later")
      }).pipe(Effect.scoped))
  }

  it("both stores hold the same content for the same log (equal digests)", () => {
    assert.strictEqual(Object.keys(digests).length, 2)
    assert.deepStrictEqual(digests["postgres"], digests["sqlite"])
  })
})
