/**
 * product/edit (docs/api-catalogue.md §2.3, "Write operations"): one object, `id` required,
 * the other fields as in product/add; only the fields sent change. A name sent empty is
 * refused (a product keeps a name). The change emits productUpdate and answers `{ id }`.
 */
import { isObj } from "./ApiCall.ts"
import { answered, refuse, type WriteCall } from "./WriteCall.ts"
import type { Product } from "./Catalog.ts"
import { defined, Form } from "./internal/Form.ts"
import { productEventView } from "./Views.ts"

export const productEdit = (w: WriteCall) => {
  const { body, business } = w
  if (!isObj(body)) return refuse(w, { body: "must be a JSON object" })
  const data = business.data
  const form = new Form()
  const id = form.id(body, "id", "id", { required: true })
  const name = form.str(body, "name", "name", { nonEmpty: true, max: 255 })
  const price = form.num(body, "price", "price", { min: 0 })
  const code = form.str(body, "code", "code", { max: 255 })
  const barcode = form.str(body, "barcode", "barcode", { max: 255 })
  const status = form.oneOf(body, "status", "status", [1, 2, 3])
  if ("appProductId" in body) form.fail("appProductId", "cannot be edited")
  if (id !== undefined && data.products.get(id) === undefined) form.fail("id", `no product ${id}`)
  if (!form.ok || id === undefined) return refuse(w, form)
  const changes: Partial<Pick<Product, "name" | "price" | "code" | "barcode" | "status">> = defined({ name, price, code, barcode, status })
  const now = w.call.env.now()
  const product = data.updateProduct(id, changes, now)!
  data.effects.add({ kind: "product.edit", key: String(product.id), id: product.id, atMs: now })
  w.call.env.webhooks.emit(business.businessId, "productUpdate", productEventView(data, product, business.depots))
  return answered(w, { id: product.id })
}
