/**
 * Reads whose `data` is one object (docs/api-catalogue.md §2.2 product/detail, §8
 * app/checkaccesstoken): product/detail from the world, the token check from the token.
 */
import * as Json from "@ocs/protocol/Json"
import { type Call, failure, finish, isObj } from "./ApiCall.ts"
import { type Business, canonicalId, type Token } from "./Auth.ts"
import type { ObjectOperation } from "./Operations.ts"
import { productEventView } from "./Views.ts"

export const readObject = (call: Call, op: ObjectOperation, business: Business, token: Token, body: Json.JsonValue) => {
  if (!isObj(body)) return failure(call, "ERR_INVALID_FORM_FIELDS", { body: "must be a JSON object" })
  const granted = business.depots.filter((d) => token.depots.includes(d))
  if (op.resource === "product" && op.operation === "detail") {
    // The example sends `id` as a string, at the top level; `filters.id` is read too.
    const raw = body["id"] ?? (isObj(body["filters"]) ? body["filters"]["id"] : undefined)
    const id = canonicalId(raw)
    if (id === undefined) return failure(call, "ERR_INVALID_FORM_FIELDS", { id: "must be a product id" })
    const product = business.data.products.get(BigInt(id))
    if (product === undefined) return failure(call, "ERR_INVALID_FORM_FIELDS", { id: `no product ${id}` })
    return finish(call, 200, "ok", Json.stringify({ code: 1, data: productEventView(business.data, product, granted) }))
  }
  // app/checkaccesstoken: what the token grants (§8), to the application that proves itself with its secretKey.
  const app = call.appId === null ? undefined : call.env.registry.apps.get(call.appId)
  if (typeof body["secretKey"] !== "string" || body["secretKey"] === "") {
    return failure(call, "ERR_INVALID_FORM_FIELDS", { secretKey: "secretKey is required" })
  }
  if (app === undefined || body["secretKey"] !== app.secretKey) return failure(call, "ERR_INVALID_SECRET_KEY", "secretKey is invalid")
  return finish(call, 200, "ok", Json.stringify({
    code: 1,
    data: {
      version: token.version,
      expiredAt: Math.floor(token.expiresAtMs / 1000),
      businessId: BigInt(business.businessId),
      depotIds: granted,
      pageIds: [],
      permissions: token.permissions
    }
  }))
}
