/**
 * Control routes that change a business's data the way the service's own users would: each
 * change is stored, then emitted as its v3 webhook event (docs/api-catalogue.md §10) to every
 * entitled app. The answer carries the event's data and how many deliveries were queued.
 *
 * v3 data: productAdd/productUpdate one product object, productDelete and orderDelete arrays
 * of ids, inventoryChange an array of items with their depots, orderAdd/orderUpdate the
 * nested order.
 */
import type { Business } from "./Auth.ts"
import { DEFAULT_DELETED_BY, ORDER_STATUS, type OrderLine, SALE_CHANNELS } from "./Catalog.ts"
import { CreateOrder, InventoryChanges, OrderChanges, ProductChanges, RawEvent } from "./ControlWire.ts"
import { big, ControlError, decode, findBusiness, idOf } from "./ControlRequest.ts"
import { route, type Route } from "./ControlRouter.ts"
import { inventoryChangeView, orderView, productEventView } from "./Views.ts"
import type { EventName } from "./WebhookEvents.ts"
import type { World } from "./World.ts"

/**
 * Emits `event` with `data` and answers `{ [key]: data, queued }`. With `?silent=true` the
 * change is stored and no webhook is sent (a fault: the service changed data without telling,
 * or a delivery that never happened), so only a pull can find it.
 */
const changed = <K extends string>(world: World, b: Business, event: EventName, key: K, data: unknown, query?: URLSearchParams) =>
  ({ [key]: data, queued: isSilent(query) ? 0 : world.webhooks.emit(b.businessId, event, data) }) as { readonly [P in K]: unknown } & { readonly queued: number }

const isSilent = (query: URLSearchParams | undefined): boolean => {
  const v = query?.get("silent")
  if (v === null || v === undefined || v === "false") return false
  if (v === "true") return true
  throw new ControlError(400, "silent: must be true or false")
}

/** `?by=<user id>`: who the deletion feed names (default DEFAULT_DELETED_BY). */
const deletedBy = (query: URLSearchParams | undefined): number => {
  const v = query?.get("by")
  if (v === null || v === undefined) return DEFAULT_DELETED_BY
  if (!/^\d{1,9}$/.test(v)) throw new ControlError(400, "by: must be a user id")
  return Number(v)
}

/** The record or a 404 naming it. */
const found = <A>(record: A | undefined, what: string): A => {
  if (record === undefined) throw new ControlError(404, `no ${what}`)
  return record
}

export const products: ReadonlyArray<Route> = [
  route("GET", "/_sim/businesses/:businessId/products/:id", (world, _req, [bid, pid]) => {
    const b = findBusiness(world, bid)
    return productEventView(b.data, found(b.data.products.get(big(idOf(pid, "productId"))), `product ${pid}`), b.depots)
  }),
  route("POST", "/_sim/businesses/:businessId/products/:id/update", (world, req, [bid, pid]) => {
    const b = findBusiness(world, bid)
    const changes = decode(ProductChanges, req.body)
    const product = found(b.data.updateProduct(big(idOf(pid, "productId")), changes, world.now()), `product ${pid}`)
    return changed(world, b, "productUpdate", "product", productEventView(b.data, product, b.depots), req.query)
  }),
  route("POST", "/_sim/businesses/:businessId/products/:id/delete", (world, req, [bid, pid]) => {
    const b = findBusiness(world, bid)
    const product = found(b.data.deleteProduct(big(idOf(pid, "productId"))), `product ${pid}`)
    return changed(world, b, "productDelete", "products", [product.id], req.query)
  }),
  route("POST", "/_sim/businesses/:businessId/inventory", (world, req, [bid]) => {
    const b = findBusiness(world, bid)
    const { changes } = decode(InventoryChanges, req.body)
    if (changes.length === 0) throw new ControlError(400, "changes: must not be empty")
    const now = world.now()
    const touched = new Map<bigint, number>()
    changes.forEach((c, i) => {
      if (!b.depots.includes(c.depotId)) throw new ControlError(400, `changes.${i}.depotId: unknown depot ${c.depotId}`)
      const level = b.data.setStock(big(idOf(c.productId, "productId")), c.depotId, c.quantity, now)
      if (level === undefined) throw new ControlError(404, `changes.${i}.productId: no product ${String(c.productId)}`)
      touched.set(level.productId, i)
    })
    // One item per product, with every depot's stock (several products may share a delivery).
    const items = [...touched.keys()].map((id) => inventoryChangeView(b.data, b.data.products.get(id)!, b.depots))
    return changed(world, b, "inventoryChange", "products", items, req.query)
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
      return {
        productId,
        code: product?.code ?? String(productId),
        name: product?.name ?? `Product ${productId}`,
        quantity: line.quantity,
        price: line.price ?? product!.price,
        discount: 0
      }
    })
    const n = b.data.orders.positions + 1
    const order = b.data.addOrder({
      appOrderId: input.appOrderId ?? `AO-${n}`,
      type: 1,
      status: input.status ?? ORDER_STATUS.new,
      saleChannel: input.saleChannel ?? SALE_CHANNELS[2]!,
      depotId,
      customerId: b.data.customers.base,
      customerName: input.customerName ?? "Walk-in customer",
      customerMobile: input.customerMobile ?? "0900000000",
      lines,
      carrierId: 5,
      shipFee: 0,
      transfer: 0
    }, world.now())
    return changed(world, b, "orderAdd", "order", orderView(order), req.query)
  }),
  route("POST", "/_sim/businesses/:businessId/orders/:id/update", (world, req, [bid, oid]) => {
    const b = findBusiness(world, bid)
    const order = found(b.data.updateOrder(big(idOf(oid, "orderId")), decode(OrderChanges, req.body), world.now()), `order ${oid}`)
    return changed(world, b, "orderUpdate", "order", orderView(order), req.query)
  }),
  route("POST", "/_sim/businesses/:businessId/orders/:id/delete", (world, req, [bid, oid]) => {
    const b = findBusiness(world, bid)
    const order = found(b.data.deleteOrder(big(idOf(oid, "orderId")), world.now(), deletedBy(req.query)), `order ${oid}`)
    return changed(world, b, "orderDelete", "orders", [order.id], req.query)
  })
]

/**
 * Customers and bills have no webhook event (docs/api-catalogue.md §10): deleting one is always
 * silent, so only a full pull can tell the copy it is gone.
 */
export const silentDeletes: ReadonlyArray<Route> = [
  route("POST", "/_sim/businesses/:businessId/customers/:id/delete", (world, _req, [bid, cid]) => {
    const b = findBusiness(world, bid)
    const customer = found(b.data.deleteCustomer(big(idOf(cid, "customerId"))), `customer ${cid}`)
    return { customers: [customer.id], queued: 0 }
  }),
  route("POST", "/_sim/businesses/:businessId/bills/:id/delete", (world, _req, [bid, billId]) => {
    const b = findBusiness(world, bid)
    const bill = found(b.data.deleteBill(big(idOf(billId, "billId")), world.now(), deletedBy(_req.query)), `bill ${billId}`)
    return { bills: [bill.id], queued: 0 }
  })
]

export const events: ReadonlyArray<Route> = [
  route("POST", "/_sim/events", (world, req) => {
    const input = decode(RawEvent, req.body)
    const b = findBusiness(world, input.businessId)
    return { queued: world.webhooks.emit(b.businessId, input.event, input.data) }
  })
]
