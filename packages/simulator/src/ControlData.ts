/**
 * Control routes that change a business's data the way the service's own users would: each
 * change is stored, then emitted as its webhook event (spec: Events) to every entitled app.
 * The answer carries the record as the event carries it and how many deliveries were queued.
 */
import type { Business } from "./Auth.ts"
import type { OrderLine } from "./Catalog.ts"
import {
  CreateOrder,
  CreatePayment,
  InventoryChanges,
  OrderChanges,
  ProductChanges,
  RawEvent
} from "./ControlWire.ts"
import { big, ControlError, decode, findBusiness, idOf } from "./ControlRequest.ts"
import { route, type Route } from "./ControlRouter.ts"
import { iso } from "./internal/Time.ts"
import { inventoryView, orderView, paymentView, productView } from "./Views.ts"
import type { EventName } from "./WebhookEvents.ts"
import type { World } from "./World.ts"

/** Emits `event` with `data` and answers `{ [key]: data, queued }`. */
const changed = <K extends string>(world: World, b: Business, event: EventName, key: K, data: unknown) =>
  ({ [key]: data, queued: world.webhooks.emit(b.businessId, event, data) }) as { readonly [P in K]: unknown } & { readonly queued: number }

/** The record or a 404 naming it. */
const found = <A>(record: A | undefined, what: string): A => {
  if (record === undefined) throw new ControlError(404, `no ${what}`)
  return record
}

/** The body of a delete event: the record's ids and when it went. */
const deleted = (world: World, record: { readonly id: bigint }, appKey: "appProductId" | "appOrderId", appValue: string) => ({
  id: record.id,
  [appKey]: appValue,
  deletedAt: iso(world.now())
})

export const products: ReadonlyArray<Route> = [
  route("GET", "/_sim/businesses/:businessId/products/:id", (world, _req, [bid, pid]) =>
    productView(found(findBusiness(world, bid).data.products.get(big(idOf(pid, "productId"))), `product ${pid}`))),
  route("POST", "/_sim/businesses/:businessId/products/:id/update", (world, req, [bid, pid]) => {
    const b = findBusiness(world, bid)
    const changes = decode(ProductChanges, req.body)
    const product = found(b.data.updateProduct(big(idOf(pid, "productId")), changes, world.now()), `product ${pid}`)
    return changed(world, b, "productUpdate", "product", productView(product))
  }),
  route("POST", "/_sim/businesses/:businessId/products/:id/delete", (world, _req, [bid, pid]) => {
    const b = findBusiness(world, bid)
    const product = found(b.data.deleteProduct(big(idOf(pid, "productId"))), `product ${pid}`)
    return changed(world, b, "productDelete", "product", deleted(world, product, "appProductId", product.appProductId))
  }),
  route("POST", "/_sim/businesses/:businessId/inventory", (world, req, [bid]) => {
    const b = findBusiness(world, bid)
    const { changes } = decode(InventoryChanges, req.body)
    if (changes.length === 0) throw new ControlError(400, "changes: must not be empty")
    const now = world.now()
    const levels = changes.map((c, i) => {
      if (!b.depots.includes(c.depotId)) throw new ControlError(400, `changes.${i}.depotId: unknown depot ${c.depotId}`)
      const level = b.data.setInventory(big(idOf(c.productId, "productId")), c.depotId, c.quantity, now)
      if (level === undefined) throw new ControlError(404, `changes.${i}.productId: no product ${String(c.productId)}`)
      return inventoryView(level)
    })
    // spec: inventoryChange may carry several products
    const data = { products: levels }
    return { ...data, queued: world.webhooks.emit(b.businessId, "inventoryChange", data) }
  })
]

export const orders: ReadonlyArray<Route> = [
  route("POST", "/_sim/businesses/:businessId/orders", (world, req, [bid]) => {
    const b = findBusiness(world, bid)
    const input = decode(CreateOrder, req.body)
    const depotId = input.depotId ?? b.depots[0] ?? 1
    if (!b.depots.includes(depotId)) throw new ControlError(400, `depotId: unknown depot ${depotId}`)
    const lines: Array<OrderLine> = (input.products ?? [{ productId: b.data.products.base, quantity: 1 }]).map((line, i) => {
      const productId = big(idOf(line.productId, `products.${i}.productId`))
      const product = b.data.products.get(productId)
      if (product === undefined && line.price === undefined) throw new ControlError(404, `products.${i}.productId: no product`)
      return { productId, quantity: line.quantity, price: line.price ?? product!.price }
    })
    const n = b.data.orders.positions + 1
    const order = b.data.addOrder({
      appOrderId: input.appOrderId ?? `AO-${n}`,
      status: input.status ?? "new",
      depotId,
      customerName: input.customerName ?? "Walk-in customer",
      customerMobile: input.customerMobile ?? "0900000000",
      products: lines
    }, world.now())
    return changed(world, b, "orderAdd", "order", orderView(order))
  }),
  route("POST", "/_sim/businesses/:businessId/orders/:id/update", (world, req, [bid, oid]) => {
    const b = findBusiness(world, bid)
    const order = found(b.data.updateOrder(big(idOf(oid, "orderId")), decode(OrderChanges, req.body), world.now()), `order ${oid}`)
    return changed(world, b, "orderUpdate", "order", orderView(order))
  }),
  route("POST", "/_sim/businesses/:businessId/orders/:id/delete", (world, _req, [bid, oid]) => {
    const b = findBusiness(world, bid)
    const order = found(b.data.deleteOrder(big(idOf(oid, "orderId"))), `order ${oid}`)
    return changed(world, b, "orderDelete", "order", deleted(world, order, "appOrderId", order.appOrderId))
  })
]

export const payments: ReadonlyArray<Route> = [
  route("POST", "/_sim/businesses/:businessId/payments", (world, req, [bid]) => {
    const b = findBusiness(world, bid)
    const input = decode(CreatePayment, req.body)
    const orderId = big(idOf(input.orderId, "orderId"))
    const order = b.data.orders.get(orderId)
    if (order === undefined) throw new ControlError(404, `orderId: no order ${orderId}`)
    const payment = b.data.addPayment({
      orderId,
      amount: input.amount ?? order.total,
      method: input.method ?? "bankTransfer"
    }, world.now())
    return changed(world, b, "paymentReceived", "payment", paymentView(payment))
  })
]

export const events: ReadonlyArray<Route> = [
  route("POST", "/_sim/events", (world, req) => {
    const input = decode(RawEvent, req.body)
    const b = findBusiness(world, input.businessId)
    return { queued: world.webhooks.emit(b.businessId, input.event, input.data) }
  })
]
