import { assert, describe, it } from "@effect/vitest"
import { ReadApi, ReadModels } from "@ocs/read-models"
import { SqliteDatabase } from "@ocs/sqlite"
import { Effect, Option } from "effect"
import * as Projections from "../src/projections/index.ts"
import { BOOKKEEPING } from "../src/projections/Projection.ts"
import { appendAndProject, files, layer, order, stockItem, syncPage, tenant, webhook } from "./helpers.ts"

/** Columns of unknown_events that say where the event was seen, not what it was. */
const AUDIT_POSITION = ["offset", "received_at"]

describe("projection registry", () => {
  it.live("every projection's table spec names the columns of the migrated table, key first", () => {
    const f = files()
    return Effect.scoped(Effect.gen(function*() {
      const db = yield* SqliteDatabase.make({ filename: f.rm, migrationsFolder: ReadModels.migrationsFolder, synchronous: "NORMAL" })
      const names = Projections.projectedTables.map((t) => t.name)
      assert.strictEqual(new Set(names).size, names.length)
      for (const spec of Projections.projectedTables) {
        const info = yield* db.use("table_info", (_, client) => client.prepare(`PRAGMA table_info(${spec.name})`).all() as Array<{ name: string; pk: number }>)
        assert.isAbove(info.length, 0, `${spec.name} exists`)
        const key = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name)
        assert.deepStrictEqual(key, [...spec.key], `${spec.name}: key`)
        // Every column is key, content or bookkeeping: a column the spec misses would be left
        // out of digests and never written by the upsert.
        const declared = new Set([...spec.key, ...spec.content, ...BOOKKEEPING, ...(spec.rank === 2 ? AUDIT_POSITION : [])])
        for (const column of info) assert.isTrue(declared.has(column.name), `${spec.name}.${column.name} is declared`)
        for (const column of spec.content) assert.isTrue(info.some((c) => c.name === column), `${spec.name}.${column} exists`)
      }
      // The statements are numbered in list order, once.
      Projections.statements.forEach((statement, i) => assert.strictEqual(statement.id, i))
    }))
  })

  it.live("ReadApi opened on its own reads what the projection wrote", () => {
    const f = files()
    const write = Effect.gen(function*() {
      yield* appendAndProject([
        webhook(tenant.businessId, "productAdd", { id: 1, name: "cà phê", code: "CF1" }),
        webhook(tenant.businessId, "inventoryChange", [stockItem(1, [[1, 5]], "id")]),
        webhook(tenant.businessId, "orderAdd", order(1, { status: 54, lines: [{ productId: 1, quantity: 2, price: 10 }] })),
        syncPage(tenant.businessId, "customer", [{ id: 1, name: "khách", mobile: "0900" }])
      ])
    }).pipe(Effect.provide(layer(f)))
    const read = Effect.gen(function*() {
      const api = yield* ReadApi.ReadApiService
      assert.strictEqual(Option.getOrThrow(yield* api.product(tenant, "1")).name, "cà phê")
      assert.strictEqual(Option.getOrThrow(yield* api.order(tenant, "1")).items.length, 1)
      assert.strictEqual((yield* api.customers(tenant, { mobile: "0900" })).items.length, 1)
      const counts = yield* api.counts(tenant)
      assert.deepStrictEqual([counts.products, counts.inventory, counts.orders, counts.customers, counts.bills], [1, 1, 1, 1, 0])
      const rows = yield* api.rowCounts
      assert.deepStrictEqual(Object.keys(rows).sort(), [
        "bills", "brands", "categories", "customers", "depots", "documents", "inventory", "orders", "payments", "products", "unknown_events"
      ])
      assert.strictEqual(rows["order_items"], undefined)
    }).pipe(Effect.provide(ReadApi.ReadApiService.layer({ filename: f.rm })))
    return Effect.andThen(write, read)
  })
})
