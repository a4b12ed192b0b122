import { assert, describe, it } from "@effect/vitest"
import { Operation } from "@ocs/protocol"
import { Scopes } from "@ocs/sync"

const ops = [Operation.productList, Operation.orderList, Operation.customerList, Operation.depotList, Operation.productInventory()] as ReadonlyArray<Operation.Operation<unknown>>
const keys = (xs: ReadonlyArray<Operation.Operation<unknown>>) => xs.map((op) => Operation.resourceKey(op))

describe("Scopes: a grant drives what is pulled", () => {
  it("leaves out what the grant does not allow, with its fix; business reads need no permission", () => {
    const { operations, notGranted } = Scopes.apply(ops, { permissions: ["product", "inventory", "order"], depots: ["1", "2"] })
    assert.deepStrictEqual(keys(operations), keys([Operation.productList, Operation.orderList, Operation.depotList, Operation.productInventory()]))
    assert.deepStrictEqual(notGranted.map((n) => [n.resource, n.permission]), [["pos:/v3.0/customer/list", "customer"]])
    assert.match(notGranted[0]!.fix, /connect again/)
  })

  it("narrows stock read by depots to those granted, and leaves it out when none is", () => {
    const narrowed = Scopes.apply([Operation.productInventory([1, 3])], { permissions: ["inventory"], depots: ["1", "2"] })
    assert.deepStrictEqual(keys(narrowed.operations), keys([Operation.productInventory([1])]))
    const none = Scopes.apply([Operation.productInventory([3])], { permissions: ["inventory"], depots: ["1", "2"] })
    assert.deepStrictEqual(none.operations, [])
    assert.strictEqual(none.notGranted[0]!.permission, "depots")
  })

  it("a tenant without known scopes (a pasted token) keeps every resource", () => {
    assert.deepStrictEqual(keys(Scopes.apply(ops, {}).operations), keys(ops))
    assert.deepStrictEqual(keys(Scopes.apply(ops, { permissions: [], depots: [] }).operations), keys(ops))
  })
})
