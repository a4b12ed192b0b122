import { assert, describe, it } from "@effect/vitest"
import { ReadModels } from "@ocs/read-models"
import { Effect } from "effect"
import { appendAndProject, files, layer, order, otherTenant, OTHER_BIZ, syncPage, tenant, webhook } from "./helpers.ts"

const product = (id: bigint | number, appProductId: string | undefined) => ({
  id,
  appProductId,
  code: `SKU-${id}`,
  barcode: `893${id}`,
  name: `Bánh mì ${id}`,
  prices: { retail: 25_000 },
  updatedAt: 1_760_000_000
})

describe("id maps", () => {
  it.live("appProductId <-> id and appOrderId <-> id per tenant, by key, by id, or paged", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      // 250 products pulled (one without a key), 2 orders by webhook, and another tenant's product with a key in common.
      const products = Array.from({ length: 250 }, (_, i) => product(1000 + i, i === 7 ? undefined : `SUP-${i}`))
      yield* appendAndProject([
        syncPage(tenant.businessId, "product", products.slice(0, 100)),
        syncPage(tenant.businessId, "product", products.slice(100, 200)),
        syncPage(tenant.businessId, "product", products.slice(200)),
        syncPage(OTHER_BIZ, "product", [product(5, "SUP-3")]),
        webhook(tenant.businessId, "orderAdd", order(9_007_199_254_740_993n, { appOrderId: "PANCAKE-1" })),
        webhook(tenant.businessId, "orderAdd", order(12, { appOrderId: "PANCAKE-2" }))
      ])
      const byKey = yield* rm.idMap(tenant, "product", { keys: ["SUP-3", "SUP-200", "missing"] })
      assert.deepStrictEqual(byKey.items.map((m) => [m.key, m.id]), [["SUP-3", "1003"], ["SUP-200", "1200"]])
      assert.deepStrictEqual((yield* rm.idMap(otherTenant, "product", { keys: ["SUP-3"] })).items.map((m) => m.id), ["5"])
      const byId = yield* rm.idMap(tenant, "product", { ids: ["1249", "1007"] })
      assert.deepStrictEqual(byId.items.map((m) => [m.id, m.key]), [["1249", "SUP-249"]], "a product without a key has no entry")
      // Paged by id: every keyed product once.
      const seen: Array<string> = []
      let after: string | undefined
      do {
        const page = yield* rm.idMap(tenant, "product", { limit: 100, after })
        seen.push(...page.items.map((m) => m.key))
        after = page.next
      } while (after !== undefined)
      assert.strictEqual(seen.length, 249)
      assert.strictEqual(new Set(seen).size, 249)
      const orders = yield* rm.idMap(tenant, "order", { keys: ["PANCAKE-1", "PANCAKE-2"] })
      assert.deepStrictEqual(orders.items.map((m) => [m.key, m.id]).sort(), [["PANCAKE-1", "9007199254740993"], ["PANCAKE-2", "12"]])
      assert.deepStrictEqual((yield* rm.idMap(tenant, "order", { ids: ["9007199254740993"] })).items.map((m) => m.key), ["PANCAKE-1"])
    }).pipe(Effect.provide(layer(f)))
  })
})
