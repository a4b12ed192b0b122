/**
 * A valid payload of each command kind, to start the console's form from (docs/api-catalogue.md,
 * "Write operations"; each passes its kind's Schema in @ocs/protocol CommandKind, checked by the
 * console suite). Keys that the service keeps unique (appProductId, appOrderId) are made fresh
 * each time, so the example as it stands can be sent; the ids (product, order, depot, supplier)
 * are the demo business's and must be the tenant's own elsewhere.
 */

/** The kinds the engine takes, in the order the form lists them. */
export const KINDS = [
  "product.add", "product.edit", "order.add", "order.edit", "customer.add", "bill.addRetail",
  "inventory.importSupplier", "inventory.exportSupplier", "inventory.importOther", "inventory.exportOther"
] as const
export type Kind = (typeof KINDS)[number]

const movement = (fresh: string) => ({ depotId: 1, products: [{ id: 100001, quantity: 5, price: 120_000 }], description: `console ${fresh}` })

/** An example payload of `kind`; `fresh` makes its unique keys unique (a few letters or digits). */
export const example = (kind: Kind, fresh: string): unknown => {
  switch (kind) {
    case "product.add":
      return { appProductId: `CONSOLE-${fresh}`, name: "Áo thun cotton", code: `CONSOLE-${fresh}`, price: 150_000, status: 1 }
    case "product.edit":
      return { id: 100001, price: 155_000 }
    case "order.add":
      return {
        info: { depotId: 1, status: 54, description: "asked from the console" },
        channel: { appOrderId: `console-${fresh}` },
        shippingAddress: { name: "Nguyễn Văn An", mobile: "0912345678", address: "12 Lý Thường Kiệt, Hoàn Kiếm" },
        products: [{ id: 100001, price: 150_000, quantity: 1 }]
      }
    case "order.edit":
      return { info: { id: 500001, privateDescription: "called the customer" } }
    case "customer.add":
      return { name: "Trần Thị Bình", mobile: "0987654321", type: 1, email: "binh@example.com" }
    case "bill.addRetail":
      return { depotId: 1, products: [{ id: 100001, quantity: 1, price: 150_000 }], description: `console ${fresh}` }
    case "inventory.importSupplier":
    case "inventory.exportSupplier":
      return { ...movement(fresh), supplierId: 1 }
    case "inventory.importOther":
    case "inventory.exportOther":
      return movement(fresh)
  }
}
