import { assert, describe, it } from "@effect/vitest"
import { SqliteDatabase } from "@ocs/sqlite"
import { ReadModels } from "@ocs/read-models"
import { Effect, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { appendAndProject, BIZ, files, layer, order, tenant, tempDir, webhook } from "./helpers.ts"

/** The migrations folder as it stood after its first `count` migrations (a file written by an older version). */
const migrationsUntil = (count: number) => {
  const dir = tempDir("read-models-migrations-")
  NodeFs.mkdirSync(NodePath.join(dir, "meta"))
  const journal = JSON.parse(NodeFs.readFileSync(NodePath.join(ReadModels.migrationsFolder, "meta/_journal.json"), "utf8")) as { entries: Array<{ tag: string }> }
  const entries = journal.entries.slice(0, count)
  NodeFs.writeFileSync(NodePath.join(dir, "meta/_journal.json"), JSON.stringify({ ...journal, entries }))
  for (const { tag } of entries) NodeFs.copyFileSync(NodePath.join(ReadModels.migrationsFolder, `${tag}.sql`), NodePath.join(dir, `${tag}.sql`))
  return dir
}

describe("migrations", () => {
  it.live("a file of the flat shape migrates, and its projection starts over from the log", () => {
    const f = files()
    // The older file is written first, then opened by this version.
    // A flat order row, a stock quantity and a checkpoint past them.
    const seed = Effect.scoped(Effect.gen(function*() {
        const old = yield* SqliteDatabase.make({ filename: f.rm, migrationsFolder: migrationsUntil(1), synchronous: "NORMAL" })
        yield* old.use("seed", (_, client) => {
          const held = `'e', 1, 0, 'webhook', 0`
          client.exec(`INSERT INTO orders (app_id, business_id, id, status, lines, line_count, record, deleted, last_event_id, last_offset, last_index, last_source, last_received_at)
            VALUES ('${tenant.appId}', '${tenant.businessId}', '1', 'New', '[]', 0, '{}', 0, ${held})`)
          client.exec(`INSERT INTO inventory (app_id, business_id, product_id, depot_id, quantity, record, last_event_id, last_offset, last_index, last_source, last_received_at)
            VALUES ('${tenant.appId}', '${tenant.businessId}', '1', '', 5, '{}', ${held})`)
          client.exec(`INSERT INTO applied_records (offset) VALUES (1)`)
          client.exec(`INSERT INTO consumer_checkpoints (consumer, checkpoint, updated_at) VALUES ('read-models', 'sqlite:1', 0)`)
        })
    }))
    return Effect.andThen(seed, Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      assert.isTrue(Option.isNone(yield* rm.checkpoint()))
      assert.strictEqual((yield* rm.orders(tenant, { includeDeleted: true })).items.length, 0)
      assert.strictEqual((yield* rm.inventory(tenant)).length, 0)
      yield* appendAndProject([webhook(BIZ, "orderAdd", order(1, { status: 54, lines: [{ productId: 1, quantity: 1, price: 1 }] }))])
      const o = Option.getOrThrow(yield* rm.order(tenant, "1"))
      assert.deepStrictEqual([o.status, o.items.length], ["54", 1])
      // A rebuild of the migrated schema completes (its last step checkpoints the WAL).
      const stats = yield* rm.rebuild({ filename: NodePath.join(f.dir, "rebuilt.db") })
      // The webhook, and the change it revealed (docs/architecture.md §4.14).
      assert.strictEqual(stats.records, 2)
    }).pipe(Effect.provide(layer(f))))
  })

  it.live("a file that still has the sync_state table migrates, keeping its rows and checkpoint", () => {
    const f = files()
    // Written by the version before the table was dropped (migrations up to 0008), with a row
    // in sync_state and a projected product.
    const seed = Effect.scoped(Effect.gen(function*() {
      const old = yield* SqliteDatabase.make({ filename: f.rm, migrationsFolder: migrationsUntil(9), synchronous: "NORMAL" })
      yield* old.use("seed", (_, client) => {
        client.exec(`INSERT INTO sync_state (app_id, business_id, resource, cursor, status, updated_at)
          VALUES ('${tenant.appId}', '${tenant.businessId}', 'product', 'c', 'idle', 0)`)
        client.exec(`INSERT INTO products (app_id, business_id, id, name, record, deleted, last_event_id, last_offset, last_index, last_source, last_received_at)
          VALUES ('${tenant.appId}', '${tenant.businessId}', '7', 'kept', '{"id":7}', 0, 'e', 1, 0, 'webhook', 0)`)
        client.exec(`INSERT INTO consumer_checkpoints (consumer, checkpoint, updated_at) VALUES ('read-models', 'sqlite:1', 0)`)
      })
    }))
    return Effect.andThen(seed, Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      assert.deepStrictEqual(yield* rm.checkpoint(), Option.some("sqlite:1"))
      assert.strictEqual(Option.getOrThrow(yield* rm.product(tenant, "7")).name, "kept")
      const tables = yield* Effect.scoped(Effect.flatMap(
        SqliteDatabase.make({ filename: f.rm, migrationsFolder: ReadModels.migrationsFolder, synchronous: "NORMAL" }),
        (db) => db.use("tables", (_, client) => client.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as Array<string>)
      ))
      assert.notInclude(tables, "sync_state")
      assert.include(tables, "products")
    }).pipe(Effect.provide(layer(f))))
  })
})
