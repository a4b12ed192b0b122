/**
 * The stock movements (docs/api-catalogue.md §5.4, "Write operations"):
 * `inventory/importsupplier` (goods in from a supplier), `exportsupplier` (goods back to a
 * supplier), `importother` and `exportother` (any other reason). Each takes `depotId*`,
 * `supplierId*` (supplier variants) or an optional `customer{}` (other variants), `products[]`
 * (each `id*`, `quantity*`, optional `price`, default the product's import price, and
 * `discount{ type, value }`) and `description` (a note; bill/list returns it).
 * The movement is stored as a bill (type 1 import or 2 export; mode 5 supplier or 10 other,
 * §5.2), the depot's stock moves (inventoryChange) and the answer is `{ id, totalAmount }`.
 */
import type { WriteKind } from "@ocs/protocol/Catalogue"
import { isObj } from "./ApiCall.ts"
import { round2 } from "./Catalog.ts"
import { answered, depotGranted, refuse, refuseDepot, type WriteCall } from "./WriteCall.ts"
import { Form } from "./internal/Form.ts"
import { depotOf, linesOf, storeBill } from "./WriteStock.ts"

const MOVES: { readonly [K in WriteKind]?: { readonly type: 1 | 2; readonly mode: number; readonly supplier: boolean } } = {
  "inventory.importSupplier": { type: 1, mode: 5, supplier: true },
  "inventory.exportSupplier": { type: 2, mode: 5, supplier: true },
  "inventory.importOther": { type: 1, mode: 10, supplier: false },
  "inventory.exportOther": { type: 2, mode: 10, supplier: false }
}

export const inventoryMove = (w: WriteCall) => {
  const { body } = w
  const kind = w.op.entry.kind
  const move = MOVES[kind]!
  if (!isObj(body)) return refuse(w, { body: "must be a JSON object" })
  const form = new Form()
  const depotId = depotOf(form, body)
  const supplierId = move.supplier ? form.num(body, "supplierId", "supplierId", { required: true, int: true, positive: true }) : undefined
  const customer = move.supplier ? undefined : form.obj(body, "customer", "customer")
  const customerName = customer === undefined ? undefined : form.str(customer, "name", "customer.name", { max: 255 })
  const customerMobile = customer === undefined ? undefined : form.str(customer, "mobile", "customer.mobile", { max: 20 })
  const description = form.str(body, "description", "description")
  const lines = linesOf(form, w, body, (p) => round2(p.price * 0.6))
  if (lines.length === 0 && form.ok) form.fail("products", "must not be empty")
  if (!form.ok || depotId === undefined) return refuse(w, form)
  if (!depotGranted(w, depotId)) return refuseDepot(w, depotId)
  const { bill, totalAmount } = storeBill(w, {
    orderId: undefined,
    depotId,
    type: move.type,
    mode: move.mode,
    customerId: undefined,
    customerName: customerName ?? "",
    customerMobile: customerMobile ?? "",
    lines,
    description,
    supplierId
  }, move.type === 1 ? 1 : -1)
  w.business.data.effects.add({ kind, key: description ?? "", id: bill.id, atMs: bill.createdAtMs })
  return answered(w, { id: bill.id, totalAmount })
}
