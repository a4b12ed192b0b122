/**
 * product/add (docs/api-catalogue.md §2.3): an array of products (or `{ products: [...] }`), at
 * most 100, every field checked before any is stored; each stored product emits productAdd.
 *
 * The reference does not say whether an appProductId already used is refused. The setting
 * `appProductIdDuplicates` chooses: "refuse" (default: ERR_INVALID_FORM_FIELDS naming the
 * item's appProductId) or "accept" (a second product is created, as a service that keeps no
 * key would; the harder case for a client that retries).
 */
import { isObj } from "./ApiCall.ts"
import { answered, refuse, type WriteCall } from "./WriteCall.ts"
import { Form } from "./internal/Form.ts"
import { productEventView } from "./Views.ts"

export const productAdd = (w: WriteCall) => {
  const { body, business } = w
  const items = Array.isArray(body) ? body : isObj(body) && Array.isArray(body["products"]) ? body["products"] : undefined
  if (items === undefined) return refuse(w, { products: "expected an array of products" })
  const form = new Form()
  const max = w.op.entry.maxItems ?? 100
  if (items.length === 0) form.fail("products", "must not be empty")
  if (items.length > max) form.fail("products", `at most ${max} products per call`)
  const refuseDuplicates = w.call.env.settings.appProductIdDuplicates === "refuse"
  const seen = new Set<string>()
  const data = business.data
  const valid = form.each(items, "products", (item, at) => {
    const appProductId = form.str(item, "appProductId", `${at}.appProductId`, { required: true, max: 255 })
    if (appProductId !== undefined && refuseDuplicates && (seen.has(appProductId) || data.hasAppProductId(appProductId))) {
      form.fail(`${at}.appProductId`, "already exists")
    }
    if (appProductId !== undefined) seen.add(appProductId)
    const name = form.str(item, "name", `${at}.name`, { required: true, max: 255 })
    const price = form.num(item, "price", `${at}.price`, { min: 0 })
    const code = form.str(item, "code", `${at}.code`, { max: 255 })
    const barcode = form.str(item, "barcode", `${at}.barcode`, { max: 255 })
    const status = form.oneOf(item, "status", `${at}.status`, [1, 2, 3])
    if (appProductId === undefined || name === undefined) return undefined
    return { appProductId, name, price: price ?? 0, code: code ?? appProductId, barcode, status: status ?? 1 }
  })
  if (!form.ok) return refuse(w, form)
  const now = w.call.env.now()
  const added = valid.map((input) =>
    data.addProduct({
      ...input,
      barcode: input.barcode ?? `29${String(data.products.positions).padStart(10, "0")}`,
      categoryId: Number(data.categories.base),
      brandId: Number(data.brands.base)
    }, now)
  )
  for (const product of added) {
    data.effects.add({ kind: "product.add", key: product.appProductId, id: product.id, atMs: now })
    w.call.env.webhooks.emit(business.businessId, "productAdd", productEventView(data, product, business.depots))
  }
  return answered(w, added.map((p) => ({ appProductId: p.appProductId, id: p.id, barcode: p.barcode })))
}
