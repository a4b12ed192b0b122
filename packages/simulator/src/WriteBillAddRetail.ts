/**
 * bill/addretail (docs/api-catalogue.md §5.4, "Write operations"): a retail sale at a depot.
 * Required: `depotId` (granted to the token) and each line's `id` and `quantity`; optional
 * `customer{ id, name, mobile }`, `description`, a line's `price` (default the product's
 * retail price) and `discount{ type: percent | cash, value }`. The bill (type 2 export,
 * mode 2 retail) shows in bill/list with its description, the stock leaves the depot
 * (inventoryChange), and the answer is `{ id, totalAmount }`. The description is where a
 * caller leaves a marker to find the bill again (the service keeps no key for bills).
 */
import { isObj } from "./ApiCall.ts"
import { answered, depotGranted, refuse, refuseDepot, type WriteCall } from "./WriteCall.ts"
import { Form } from "./internal/Form.ts"
import { depotOf, linesOf, storeBill } from "./WriteStock.ts"

export const billAddRetail = (w: WriteCall) => {
  const { body } = w
  if (!isObj(body)) return refuse(w, { body: "must be a JSON object" })
  const data = w.business.data
  const form = new Form()
  const depotId = depotOf(form, body)
  const customer = form.obj(body, "customer", "customer")
  const customerId = customer === undefined ? undefined : form.id(customer, "id", "customer.id")
  const customerName = customer === undefined ? undefined : form.str(customer, "name", "customer.name", { max: 255 })
  const customerMobile = customer === undefined ? undefined : form.str(customer, "mobile", "customer.mobile", { max: 20 })
  if (customerId !== undefined && data.customers.get(customerId) === undefined) form.fail("customer.id", `no customer ${customerId}`)
  const description = form.str(body, "description", "description")
  const lines = linesOf(form, w, body, (p) => p.price)
  if (lines.length === 0 && form.ok) form.fail("products", "must not be empty")
  if (!form.ok || depotId === undefined) return refuse(w, form)
  if (!depotGranted(w, depotId)) return refuseDepot(w, depotId)
  const known = customerId !== undefined ? data.customers.get(customerId) : customerMobile !== undefined ? data.customerByMobile(customerMobile) : undefined
  const { bill, totalAmount } = storeBill(w, {
    orderId: undefined,
    depotId,
    type: 2,
    mode: 2,
    customerId: known?.id,
    customerName: customerName ?? known?.name ?? "",
    customerMobile: customerMobile ?? known?.mobile ?? "",
    lines,
    description
  }, -1)
  data.effects.add({ kind: "bill.addRetail", key: description ?? "", id: bill.id, atMs: bill.createdAtMs })
  return answered(w, { id: bill.id, totalAmount })
}
