import { assert, describe, it } from "@effect/vitest"
import { Effect } from "@ocs/plugin-sdk"
import { runPlugin, webhook } from "@ocs/plugin-sdk/testing"
import restock from "../src/index.ts"

/** A v3 inventoryChange: one product, its stock in one depot. */
const stock = (productId: number, remain: number, depotId = 1) =>
  webhook("inventoryChange", [{ id: productId, remain, available: remain, depots: [{ id: depotId, remain, available: remain }] }])

const config = { supplierId: "77", depotIds: ["1"], reorderPoint: 10, quantity: 50, products: { "8": { reorderPoint: 3, quantity: 5 } } }

describe("auto-restock", () => {
  it.effect("a crossing below the reorder point in a watched depot asks for one supplier import, keyed per product and depot", () =>
    Effect.gen(function*() {
      const report = yield* runPlugin(restock, {
        config,
        events: [
          ...stock(7, 20), // above: nothing
          ...stock(7, 9), // crosses below: import 50
          ...stock(7, 4), // still below: nothing
          ...stock(7, 2, 2), // a depot not watched: nothing
          ...stock(7, 30), // back above: re-arms
          ...stock(7, 1), // crosses again: import 50
          ...stock(8, 4), // own reorder point 3: not below
          ...stock(8, 2) // import 5
        ]
      })
      const commands = report.effects.flatMap((e) => (e._tag === "Command" ? [e] : []))
      assert.deepStrictEqual(commands.map((c) => [c.kind, c.key, (c.payload as { products: Array<{ id: string; quantity: number }> }).products[0]]), [
        ["inventory.importSupplier", "restock:7:1", { id: "7", quantity: 50 }],
        ["inventory.importSupplier", "restock:7:1", { id: "7", quantity: 50 }],
        ["inventory.importSupplier", "restock:8:1", { id: "8", quantity: 5 }]
      ])
      for (const c of commands) {
        const p = c.payload as { depotId: string; supplierId: string; description: string }
        assert.strictEqual(p.depotId, "1")
        assert.strictEqual(p.supplierId, "77")
        assert.match(p.description, /^auto-restock: /)
      }
    }))

  it.effect("an invalid configuration is refused before any event", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(runPlugin(restock, { config: { ...config, depotIds: [] }, events: stock(7, 1) }))
      assert.strictEqual(refused._tag, "InvalidPluginConfig")
    }))
})
