/**
 * What bill/addretail and the four stock movements share: their `products[]` lines (each with
 * `id*` and `quantity*`, an optional `price`, at most 100), the depot they act on, and how a
 * stored bill moves stock: an import adds to the depot, an export or a sale takes away, and
 * every product touched is announced in one inventoryChange (docs/api-catalogue.md §10).
 */
import type * as Json from "@ocs/protocol/Json"
import type { WriteCall } from "./WriteCall.ts"
import type { Bill, BillLine, Product } from "./Catalog.ts"
import { lineAmount, round2 } from "./Catalog.ts"
import type { Form, Obj } from "./internal/Form.ts"
import { inventoryChangeView } from "./Views.ts"

/** A line's discount: `{ type: "percent" | "cash", value }` (bill/addretail) or a number (cash). */
const discountOf = (form: Form, item: Obj, at: string, price: number): number => {
  const raw = item["discount"]
  if (raw === undefined || raw === null) return 0
  if (typeof raw === "number") return form.num(item, "discount", `${at}.discount`, { min: 0 }) ?? 0
  const d = form.obj(item, "discount", `${at}.discount`)
  if (d === undefined) return 0
  const type = d["type"]
  const value = form.num(d, "value", `${at}.discount.value`, { required: true, min: 0 })
  if (type !== "percent" && type !== "cash") form.fail(`${at}.discount.type`, "must be percent or cash")
  if (value === undefined) return 0
  if (type === "percent") {
    if (value > 100) form.fail(`${at}.discount.value`, "a percentage is at most 100")
    return round2((price * value) / 100)
  }
  return value
}

/** The lines of `body.products`, with each product looked up; messages for every bad line. */
export const linesOf = (form: Form, w: WriteCall, body: Obj, defaultPrice: (p: Product) => number): Array<BillLine> => {
  const items: ReadonlyArray<Json.JsonValue> = form.arr(body, "products", "products", { required: true, max: w.op.entry.maxLines ?? 100 }) ?? []
  const data = w.business.data
  return form.each(items, "products", (item, at) => {
    const id = form.id(item, "id", `${at}.id`, { required: true })
    const quantity = form.num(item, "quantity", `${at}.quantity`, { required: true, positive: true })
    const price = form.num(item, "price", `${at}.price`, { min: 0 })
    const product = id === undefined ? undefined : data.products.get(id)
    if (id !== undefined && product === undefined) form.fail(`${at}.id`, `no product ${id}`)
    if (product === undefined || quantity === undefined) return undefined
    const unit = price ?? defaultPrice(product)
    const discount = discountOf(form, item, at, unit)
    return { productId: product.id, code: product.code, barcode: product.barcode, name: product.name, quantity, price: unit, discount }
  })
}

/** `depotId` (required); whether the token may use it is checked once the form passes. */
export const depotOf = (form: Form, body: Obj): number | undefined =>
  form.num(body, "depotId", "depotId", { required: true, int: true, positive: true })

/**
 * Moves the stock of `lines` in a depot (`remain` and `holding` per unit of quantity) and
 * announces every product touched in one inventoryChange.
 */
export const moveLines = (
  w: WriteCall,
  depotId: number,
  lines: ReadonlyArray<{ readonly productId: bigint; readonly quantity: number }>,
  perUnit: { readonly remain?: number; readonly holding?: number }
): void => {
  const { business } = w
  const data = business.data
  const now = w.call.env.now()
  const touched = new Set<bigint>()
  for (const line of lines) {
    const delta = {
      ...(perUnit.remain === undefined ? {} : { remain: perUnit.remain * line.quantity }),
      ...(perUnit.holding === undefined ? {} : { holding: perUnit.holding * line.quantity })
    }
    if (data.moveStock(line.productId, depotId, delta, now) !== undefined) touched.add(line.productId)
  }
  const items = [...touched].map((id) => inventoryChangeView(data, data.products.get(id)!, business.depots))
  if (items.length > 0) w.call.env.webhooks.emit(business.businessId, "inventoryChange", items)
}

/** Stores the bill, moves its stock (`sign` +1 import, -1 export) and emits inventoryChange. */
export const storeBill = (w: WriteCall, input: Omit<Bill, "id" | "createdAtMs">, sign: 1 | -1): { readonly bill: Bill; readonly totalAmount: number } => {
  const bill = w.business.data.addBill(input, w.call.env.now())
  moveLines(w, bill.depotId, bill.lines, { remain: sign })
  return { bill, totalAmount: round2(bill.lines.reduce((sum, l) => sum + lineAmount(l), 0)) }
}
