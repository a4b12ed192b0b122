import { assert, describe, it } from "@effect/vitest"
import { Catalogue } from "@ocs/protocol"

describe("Catalogue.writes", () => {
  it("declares each command kind once, at its own POS path, none shadowing a read", () => {
    const kinds = Catalogue.writes.map((w) => w.kind)
    assert.strictEqual(new Set(kinds).size, kinds.length)
    const paths = Catalogue.writes.map((w) => `${w.resource}/${w.operation}`)
    assert.strictEqual(new Set(paths).size, paths.length)
    for (const w of Catalogue.writes) {
      assert.strictEqual(w.family, "pos")
      assert.isUndefined(Catalogue.find("pos", w.resource, w.operation), `${w.kind} is also a read`)
      assert.strictEqual(Catalogue.write(w.kind), w)
    }
    assert.deepStrictEqual(paths.filter((p) => p.startsWith("inventory/")), [
      "inventory/importsupplier",
      "inventory/exportsupplier",
      "inventory/importother",
      "inventory/exportother"
    ])
  })

  it("gives array bodies an item limit, and keys and markers where the reference allows them", () => {
    for (const w of Catalogue.writes) {
      if (w.body === "array") assert.strictEqual(w.maxItems, 100, w.kind)
      assert.isAbove(w.required.length, 0, w.kind)
    }
    assert.deepStrictEqual(Catalogue.write("order.add").naturalKey, { path: "channel.appOrderId", scope: "appId", refusesDuplicates: true })
    const marked = Catalogue.writes.filter((w) => w.marker !== undefined).map((w) => w.kind)
    assert.includeMembers(marked, ["bill.addRetail", "inventory.importSupplier", "inventory.exportSupplier", "inventory.importOther", "inventory.exportOther"])
  })
})
