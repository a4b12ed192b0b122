/**
 * product/add (docs/api-catalogue.md §2.3): an array of products (or `{ products: [...] }`), at
 * most `maxItems`, every field checked before any is stored; each stored product emits
 * productAdd.
 */
import * as Json from "@ocs/protocol/Json"
import { type Call, failure, finish, isObj, type Messages } from "./ApiCall.ts"
import type { Business, Token } from "./Auth.ts"
import type { AddOperation } from "./Operations.ts"
import { productEventView } from "./Views.ts"

export const add = (call: Call, op: AddOperation, business: Business, _token: Token, body: Json.JsonValue) => {
  const items = Array.isArray(body) ? body : isObj(body) && Array.isArray(body["products"]) ? body["products"] : undefined
  if (items === undefined) {
    return failure(call, "ERR_INVALID_FORM_FIELDS", { products: "expected an array of products" })
  }
  const messages: Messages = {}
  if (items.length === 0) messages["products"] = "must not be empty"
  if (items.length > op.maxItems) messages["products"] = `at most ${op.maxItems} products per call`
  const seen = new Set<string>()
  const data = business.data
  const valid: Array<{ appProductId: string; code: string; barcode: string | undefined; name: string; price: number }> = []
  items.forEach((item, i) => {
    const at = `products.${i}`
    if (!isObj(item)) {
      messages[at] = "must be an object"
      return
    }
    const appProductId = item["appProductId"]
    const name = item["name"]
    const price = item["price"]
    const code = item["code"]
    const barcode = item["barcode"]
    if (appProductId === undefined) messages[`${at}.appProductId`] = "is required"
    else if (typeof appProductId !== "string" || appProductId === "") messages[`${at}.appProductId`] = "must be a non-empty string"
    else if (seen.has(appProductId) || data.hasAppProductId(appProductId)) messages[`${at}.appProductId`] = "already exists"
    if (typeof appProductId === "string") seen.add(appProductId)
    if (name === undefined) messages[`${at}.name`] = "is required"
    else if (typeof name !== "string" || name.trim() === "") messages[`${at}.name`] = "must be a non-empty string"
    if (price === undefined) messages[`${at}.price`] = "is required"
    else if (typeof price !== "number" || !Number.isFinite(price)) messages[`${at}.price`] = "must be a number"
    else if (price < 0) messages[`${at}.price`] = "must not be negative"
    if (code !== undefined && typeof code !== "string") messages[`${at}.code`] = "must be a string"
    if (barcode !== undefined && typeof barcode !== "string") messages[`${at}.barcode`] = "must be a string"
    if (typeof appProductId === "string" && typeof name === "string" && typeof price === "number") {
      valid.push({
        appProductId,
        name,
        price,
        code: typeof code === "string" ? code : appProductId,
        barcode: typeof barcode === "string" ? barcode : undefined
      })
    }
  })
  if (Object.keys(messages).length > 0) return failure(call, "ERR_INVALID_FORM_FIELDS", messages)
  const now = call.env.now()
  const added = valid.map((input) =>
    data.addProduct({
      ...input,
      barcode: input.barcode ?? `29${String(data.products.positions).padStart(10, "0")}`,
      categoryId: Number(data.categories.base),
      brandId: Number(data.brands.base),
      status: 1
    }, now)
  )
  for (const product of added) {
    call.env.webhooks.emit(business.businessId, "productAdd", productEventView(data, product, business.depots))
  }
  finish(
    call,
    200,
    "ok",
    Json.stringify({
      code: 1,
      data: added.map((p) => ({ appProductId: p.appProductId, id: p.id, barcode: p.barcode }))
    })
  )
}
