/**
 * order/edit (docs/api-catalogue.md §3.4, "Write operations"): `{ info{ id*, description,
 * privateDescription, status }, shippingAddress{ name, mobile, address }, carrier{ customerShipFee },
 * payment{ transferAmount } }`.
 *
 * - Only the fields sent change, and a field sent empty ("" or null) is cleared: that is the
 *   reference's warning to send only what changes. Name and mobile cannot be cleared.
 * - Products cannot be edited: a body with `products` is refused naming it.
 * - An order handed over to a carrier (in transit, failed delivery, returning, return
 *   confirmed) or finished (success, returned) cannot be edited at all: refused naming
 *   `info.id` (inferred: the reference states the rule, not its error).
 * - `info.status` may only become confirmed, customer cancelled, system cancelled, success or
 *   returned; a cancelled order stays cancelled (inferred). A refused move names `info.status`.
 *
 * The change emits orderUpdate and answers `{ id }`. An order that holds stock (order/add with a
 * depot) gives it up on a status change: it leaves the depot on success, and is released on a
 * cancellation or a return (inventoryChange).
 */
import { ORDER_STATUS } from "./Catalog.ts"
import { isObj } from "./ApiCall.ts"
import { answered, refuse, type WriteCall } from "./WriteCall.ts"
import { defined, Form, type Obj } from "./internal/Form.ts"
import { orderView } from "./Views.ts"
import { moveLines } from "./WriteStock.ts"

/** Statuses order/edit may set (docs/api-catalogue.md §3.4). */
export const EDIT_STATUSES: ReadonlyArray<number> = [
  ORDER_STATUS.confirmed,
  ORDER_STATUS.customerCancelled,
  ORDER_STATUS.systemCancelled,
  ORDER_STATUS.success,
  ORDER_STATUS.returned
]

/** Orders a carrier holds or held (§3.2): no edit once handed over. */
export const HANDED_OVER: ReadonlyArray<number> = [ORDER_STATUS.inTransit, ORDER_STATUS.failed, ORDER_STATUS.returning, 74]
/** Finished orders: no edit. */
export const FINISHED: ReadonlyArray<number> = [ORDER_STATUS.success, ORDER_STATUS.returned]
const CANCELLED: ReadonlyArray<number> = [ORDER_STATUS.carrierCancelled, ORDER_STATUS.customerCancelled, ORDER_STATUS.systemCancelled, ORDER_STATUS.outOfStock]

/** A text field: undefined when not sent, "" when sent empty (to clear). */
const text = (form: Form, o: Obj, key: string, path: string): string | undefined =>
  o[key] === null || o[key] === "" ? "" : form.str(o, key, path)

export const orderEdit = (w: WriteCall) => {
  const { body, business } = w
  if (!isObj(body)) return refuse(w, { body: "must be a JSON object" })
  const data = business.data
  const form = new Form()
  if ("products" in body) form.fail("products", "products of an order cannot be edited")
  const info = form.obj(body, "info", "info", { required: true }) ?? {}
  const id = form.id(info, "id", "info.id", { required: true })
  const description = text(form, info, "description", "info.description")
  const privateDescription = text(form, info, "privateDescription", "info.privateDescription")
  const status = form.oneOf(info, "status", "info.status", EDIT_STATUSES)
  const address = form.obj(body, "shippingAddress", "shippingAddress") ?? {}
  const name = form.str(address, "name", "shippingAddress.name", { nonEmpty: true, max: 255 })
  const mobile = form.str(address, "mobile", "shippingAddress.mobile", { nonEmpty: true, max: 20 })
  const street = text(form, address, "address", "shippingAddress.address")
  const payment = form.obj(body, "payment", "payment") ?? {}
  const transfer = payment["transferAmount"] === null || payment["transferAmount"] === "" ? 0 : form.num(payment, "transferAmount", "payment.transferAmount", { min: 0 })
  const order = id === undefined ? undefined : data.orders.get(id)
  if (id !== undefined && order === undefined) form.fail("info.id", `no order ${id}`)
  if (order !== undefined) {
    if (HANDED_OVER.includes(order.status)) form.fail("info.id", `order ${order.id} was handed over to a carrier (status ${order.status}) and cannot be edited`)
    else if (FINISHED.includes(order.status)) form.fail("info.id", `order ${order.id} is finished (status ${order.status}) and cannot be edited`)
    else if (status !== undefined && status !== order.status && CANCELLED.includes(order.status) && !CANCELLED.includes(status)) {
      form.fail("info.status", `order ${order.id} is cancelled (status ${order.status}) and cannot move to ${status}`)
    }
  }
  if (!form.ok || order === undefined) return refuse(w, form)
  const now = w.call.env.now()
  const changes = defined({
    description,
    privateDescription,
    status,
    customerName: name,
    customerMobile: mobile,
    customerAddress: street,
    transfer
  })
  const updated = data.updateOrder(order.id, changes, now)!
  data.effects.add({ kind: "order.edit", key: String(updated.id), id: updated.id, atMs: now })
  w.call.env.webhooks.emit(business.businessId, "orderUpdate", orderView(updated))
  if (order.holdsStock === true && status !== undefined && status !== order.status && !CANCELLED.includes(order.status)) {
    // The held quantities leave the depot on success, and are released on a cancellation or a return.
    if (status === ORDER_STATUS.success) moveLines(w, order.depotId, order.lines, { holding: -1, remain: -1 })
    else if (status !== ORDER_STATUS.confirmed) moveLines(w, order.depotId, order.lines, { holding: -1 })
  }
  return answered(w, { id: updated.id })
}
