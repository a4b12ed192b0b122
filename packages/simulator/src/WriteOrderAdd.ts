/**
 * order/add (docs/api-catalogue.md §3.4, "Write operations"): one order with sections `info`,
 * `channel`, `shippingAddress`, `carrier`, `products[]` (at most 500) and `payment`.
 * Required: `channel.appOrderId`, `shippingAddress.name` and `.mobile`, and each line's `id`,
 * `price` and `quantity`. `info.status` may only be new, confirming, awaiting customer
 * confirmation or confirmed (default new). The service blocks a second order with the same
 * `appOrderId` from the same application: refused naming `channel.appOrderId`, without the
 * existing order's id. A stored order emits orderAdd and answers `{ id, trackingUrl, carrierCode }`;
 * with `info.depotId` its quantities are held in that depot (`holding`, inventoryChange).
 */
import { ORDER_STATUS, type OrderLine } from "./Catalog.ts"
import { isObj } from "./ApiCall.ts"
import { answered, depotGranted, refuse, refuseDepot, type WriteCall } from "./WriteCall.ts"
import { Form } from "./internal/Form.ts"
import { orderView } from "./Views.ts"
import { moveLines } from "./WriteStock.ts"

/** The statuses an order may be created in (docs/api-catalogue.md §3.4). */
export const ADD_STATUSES: ReadonlyArray<number> = [
  ORDER_STATUS.new,
  ORDER_STATUS.confirming,
  ORDER_STATUS.awaitingCustomer,
  ORDER_STATUS.confirmed
]

export const orderAdd = (w: WriteCall) => {
  const { body, business } = w
  if (!isObj(body)) return refuse(w, { body: "must be a JSON object" })
  const data = business.data
  const form = new Form()
  const info = form.obj(body, "info", "info") ?? {}
  const type = form.num(info, "type", "info.type", { int: true, positive: true })
  const depotId = form.num(info, "depotId", "info.depotId", { int: true, positive: true })
  const status = form.oneOf(info, "status", "info.status", ADD_STATUSES)
  const description = form.str(info, "description", "info.description")
  const privateDescription = form.str(info, "privateDescription", "info.privateDescription")
  const channel = form.obj(body, "channel", "channel", { required: true })
  const appOrderId = channel === undefined ? undefined : form.str(channel, "appOrderId", "channel.appOrderId", { required: true, max: 255 })
  const saleChannel = channel === undefined ? undefined : form.num(channel, "saleChannel", "channel.saleChannel", { int: true, positive: true })
  const address = form.obj(body, "shippingAddress", "shippingAddress", { required: true })
  const name = address === undefined ? undefined : form.str(address, "name", "shippingAddress.name", { required: true, max: 255 })
  const mobile = address === undefined ? undefined : form.str(address, "mobile", "shippingAddress.mobile", { required: true, max: 20 })
  const street = address === undefined ? undefined : form.str(address, "address", "shippingAddress.address")
  const carrier = form.obj(body, "carrier", "carrier") ?? {}
  const carrierId = form.num(carrier, "id", "carrier.id", { int: true, positive: true })
  const shipFee = form.num(carrier, "customerShipFee", "carrier.customerShipFee", { min: 0 })
  const payment = form.obj(body, "payment", "payment") ?? {}
  const transfer = form.num(payment, "transferAmount", "payment.transferAmount", { min: 0 })
  const items = form.arr(body, "products", "products", { required: true, max: w.op.entry.maxLines ?? 500 })
  const lines: Array<OrderLine> = items === undefined ? [] : form.each(items, "products", (item, at) => {
    const id = form.id(item, "id", `${at}.id`, { required: true })
    const price = form.num(item, "price", `${at}.price`, { required: true, min: 0 })
    const quantity = form.num(item, "quantity", `${at}.quantity`, { required: true, int: true, positive: true })
    const discount = form.num(item, "discount", `${at}.discount`, { min: 0 })
    const product = id === undefined ? undefined : data.products.get(id)
    if (id !== undefined && product === undefined) form.fail(`${at}.id`, `no product ${id}`)
    if (product === undefined || price === undefined || quantity === undefined) return undefined
    return { productId: product.id, code: product.code, name: product.name, quantity, price, discount: discount ?? 0 }
  })
  const appId = w.call.appId ?? ""
  if (appOrderId !== undefined && data.orderOfApp(appId, appOrderId) !== undefined) {
    form.fail("channel.appOrderId", `an order with appOrderId ${appOrderId} already exists`)
  }
  if (!form.ok || appOrderId === undefined || name === undefined || mobile === undefined) return refuse(w, form)
  if (depotId !== undefined && !depotGranted(w, depotId)) return refuseDepot(w, depotId)
  const now = w.call.env.now()
  const customer = data.customerByMobile(mobile)
  const order = data.addAppOrder(appId, {
    appOrderId,
    type: type ?? 1,
    status: status ?? ORDER_STATUS.new,
    saleChannel: saleChannel ?? 10,
    depotId: depotId ?? business.depots[0] ?? 1,
    customerId: customer?.id ?? 0n,
    customerName: name,
    customerMobile: mobile,
    customerAddress: street,
    lines,
    carrierId: carrierId ?? 0,
    shipFee: shipFee ?? 0,
    transfer: transfer ?? 0,
    description,
    privateDescription,
    holdsStock: depotId !== undefined
  }, now)
  data.effects.add({ kind: "order.add", key: order.appOrderId, id: order.id, atMs: now })
  w.call.env.webhooks.emit(business.businessId, "orderAdd", orderView(order))
  // §3.4: an order given a depot holds its quantities there, as one made in the back office.
  if (order.holdsStock === true) moveLines(w, order.depotId, order.lines, { holding: 1 })
  return answered(w, { id: order.id, trackingUrl: `https://tracking.example/${order.id}`, carrierCode: "" })
}
