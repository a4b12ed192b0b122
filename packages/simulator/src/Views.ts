/**
 * How records look on the wire (spec: "Shape of the data items ... not shown"; these are the
 * simulator's choices). Ids are bigints, written as JSON integer literals by
 * `@ocs/protocol/Json`; `updatedAt` is an ISO-8601 string (see internal/Time.ts).
 */
import type { InventoryLevel, Order, Payment, Product } from "./Catalog.ts"
import { iso } from "./internal/Time.ts"

export const productView = (p: Product) => ({
  id: p.id,
  appProductId: p.appProductId,
  code: p.code,
  barcode: p.barcode,
  name: p.name,
  price: p.price,
  updatedAt: iso(p.updatedAtMs)
})

/** The same as `Json.stringify(productView(p))`, written by hand for the list hot path. */
export const productText = (p: Product): string =>
  `{"id":${p.id},"appProductId":${JSON.stringify(p.appProductId)},"code":${JSON.stringify(p.code)},"barcode":${
    JSON.stringify(p.barcode)
  },"name":${JSON.stringify(p.name)},"price":${p.price},"updatedAt":"${iso(p.updatedAtMs)}"}`

export const inventoryView = (level: InventoryLevel) => ({
  productId: level.productId,
  depotId: level.depotId,
  quantity: level.quantity,
  updatedAt: iso(level.updatedAtMs)
})

export const orderView = (o: Order) => ({
  id: o.id,
  appOrderId: o.appOrderId,
  status: o.status,
  depotId: o.depotId,
  customerName: o.customerName,
  customerMobile: o.customerMobile,
  products: o.products.map((line) => ({ productId: line.productId, quantity: line.quantity, price: line.price })),
  total: o.total,
  createdAt: iso(o.createdAtMs),
  updatedAt: iso(o.updatedAtMs)
})

export const paymentView = (p: Payment) => ({
  id: p.id,
  orderId: p.orderId,
  amount: p.amount,
  method: p.method,
  receivedAt: iso(p.receivedAtMs),
  updatedAt: iso(p.updatedAtMs)
})
