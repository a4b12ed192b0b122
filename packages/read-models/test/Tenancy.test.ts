import { assert, describe, it } from "@effect/vitest"
import { ReadModels } from "@ocs/read-models"
import { Effect, Option } from "effect"
import { BIZ, OTHER_BIZ, appendAndProject, bill, files, layer, order, otherTenant, stockItem, syncPage, tenant, webhook } from "./helpers.ts"

/** The same ids in two businesses, each value tagged with its business. */
const facts = (biz: string) => [
  webhook(biz, "productAdd", { id: 1, name: `product of ${biz}`, code: `code-${biz}` }),
  webhook(biz, "inventoryChange", [stockItem(1, [[1, Number(biz.slice(0, 3))]], "id")]),
  webhook(biz, "orderAdd", order(1, { appOrderId: `order-${biz}`, status: 54, saleChannel: 2, depotId: 1, customer: { mobile: "0900" }, lines: [{ productId: 1, quantity: 1, price: 1 }] })),
  syncPage(biz, "bill", [bill(1, { depotId: 1, customer: { id: 1 }, lines: [{ id: 1, quantity: 1, price: 1 }] })]),
  syncPage(biz, "customer", [{ id: 1, name: `customer of ${biz}`, mobile: "0900" }]),
  syncPage(biz, "depot", [{ id: 1, name: `depot of ${biz}` }]),
  syncPage(biz, "category", [{ id: 1, name: `category of ${biz}` }]),
  syncPage(biz, "brand", [{ id: 1, name: `brand of ${biz}` }]),
  webhook(biz, "paymentReceived", { id: 1, orderId: 1, method: `method-${biz}` }),
  syncPage(biz, "invoice", [{ id: 1, note: `invoice of ${biz}` }]),
  // The page service: the same page, conversation and message ids in both.
  syncPage(biz, "page", [{ id: "101", name: `page of ${biz}` }]),
  syncPage(biz, "pageUser", [{ id: "7", displayName: `staff of ${biz}` }]),
  syncPage(biz, "conversationTag", [{ id: "t1", name: `tag of ${biz}`, order: 1 }]),
  syncPage(biz, "conversation", [{ id: "101_1", pageId: "101", lastMessage: `hello ${biz}`, status: 1, updatedAt: 1_760_000_000 }]),
  syncPage(biz, "message", [{ id: "m_1", conversationId: "101_1", pageId: "101", message: `hello ${biz}`, createdAt: 1_760_000_000_000 }]),
  syncPage(biz, "pageCustomer", [{ id: "11", fanpageId: "101", name: `customer of ${biz}`, phones: ["0900"], emails: [] }]),
  webhook(biz, "someFutureEvent", { owner: biz })
]

describe("tenancy", () => {
  it.live("a tenant never sees another tenant's rows through any read function", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([...facts(BIZ), ...facts(OTHER_BIZ)])

      for (const [t, biz] of [[tenant, BIZ], [otherTenant, OTHER_BIZ]] as const) {
        const own = (rows: ReadonlyArray<{ readonly businessId: string }>) => {
          assert.isAbove(rows.length, 0)
          for (const row of rows) assert.strictEqual(row.businessId, biz)
        }
        own((yield* rm.products(t, { includeDeleted: true })).items)
        own((yield* rm.products(t, { search: "product" })).items)
        own([Option.getOrThrow(yield* rm.product(t, "1"))])
        own(yield* rm.inventory(t))
        own(yield* rm.inventory(t, { productId: "1" }))
        own(yield* rm.inventory(t, { depotId: "1" }))
        own((yield* rm.orders(t, { customerMobile: "0900", includeDeleted: true })).items)
        own((yield* rm.orders(t, { status: "54", saleChannel: "2", depotId: "1" })).items)
        own([Option.getOrThrow(yield* rm.order(t, "1"))])
        own(Option.getOrThrow(yield* rm.order(t, "1")).items)
        own((yield* rm.bills(t, { depotId: "1", customerId: "1" })).items)
        own(Option.getOrThrow(yield* rm.bill(t, "1")).items)
        own((yield* rm.customers(t, { search: "customer", mobile: "0900" })).items)
        own([Option.getOrThrow(yield* rm.customer(t, "1"))])
        own(yield* rm.depots(t))
        own(yield* rm.categories(t))
        own(yield* rm.brands(t))
        assert.strictEqual(Option.getOrThrow(yield* rm.customer(t, "1")).name, `customer of ${biz}`)
        assert.strictEqual((yield* rm.depots(t))[0]!.name, `depot of ${biz}`)
        own((yield* rm.payments(t, { orderId: "1" })).items)
        own((yield* rm.documents(t, "invoice")).items)
        own([Option.getOrThrow(yield* rm.document(t, "invoice", "1"))])
        own((yield* rm.unknownEvents(t)).items)
        own(yield* rm.vpagePages(t))
        own(yield* rm.vpageUsers(t))
        own(yield* rm.vpageTags(t))
        own((yield* rm.vpageConversations(t, { pageId: "101", status: "1" })).items)
        own([Option.getOrThrow(yield* rm.vpageConversation(t, "101_1"))])
        own((yield* rm.vpageMessages(t, "101_1")).items)
        own((yield* rm.vpageCustomers(t, { pageId: "101" })).items)
        assert.strictEqual((yield* rm.vpageMessages(t, "101_1")).items[0]!.message, `hello ${biz}`)
        assert.strictEqual(Option.getOrThrow(yield* rm.product(t, "1")).name, `product of ${biz}`)
        assert.deepStrictEqual(yield* rm.counts(t), {
          products: 1, deletedProducts: 0, inventory: 1, orders: 1, deletedOrders: 0, bills: 1, deletedBills: 0,
          customers: 1, depots: 1, categories: 1, brands: 1, payments: 1, documents: 1, unknownEvents: 1
        })
      }
      // A tenant that has nothing sees nothing.
      const stranger = { appId: "1001", businessId: "1" }
      assert.strictEqual((yield* rm.products(stranger)).items.length, 0)
      assert.isTrue(Option.isNone(yield* rm.product(stranger, "1")))
      assert.strictEqual((yield* rm.counts(stranger)).products, 0)

      // Per-tenant digests differ, and deleting one tenant's facts does not change the other's.
      const before = yield* rm.digest(otherTenant)
      assert.notStrictEqual((yield* rm.digest(tenant)).digest, before.digest)
      yield* appendAndProject([webhook(BIZ, "productDelete", [1]), webhook(BIZ, "orderDelete", [1])])
      assert.strictEqual((yield* rm.digest(otherTenant)).digest, before.digest)
      assert.isFalse(Option.getOrThrow(yield* rm.product(otherTenant, "1")).deleted)
    }).pipe(Effect.provide(layer(f)))
  })
})
