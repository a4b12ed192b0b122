/**
 * `ctx.query` over the read models. The SDK describes the rows in its own `Views` (a plugin does
 * not depend on the read models); returning the read models' rows where the SDK's are expected
 * is what holds the two to the same shape at compile time.
 */
import { Effect } from "effect"
import type { ReadModels } from "@ocs/read-models"
import { Capabilities, PluginError } from "@ocs/plugin-sdk"

const queryError = (operation: string) => (e: { readonly message: string }) => new PluginError.QueryError({ operation, message: e.message })

/** The read models of one tenant. A null business addresses application-level rows. */
export const readModelsQuery = (rm: ReadModels.ReadModelsService, tenant: Capabilities.Tenant): Capabilities.Query => {
  const t = { appId: tenant.appId, businessId: tenant.businessId ?? "" }
  return {
    products: (o) => Effect.mapError(rm.products(t, o), queryError("products")),
    product: (id) => Effect.mapError(rm.product(t, id), queryError("product")),
    inventory: (o) => Effect.mapError(rm.inventory(t, o), queryError("inventory")),
    orders: (o) => Effect.mapError(rm.orders(t, o), queryError("orders")),
    order: (id) => Effect.mapError(rm.order(t, id), queryError("order")),
    payments: (o) => Effect.mapError(rm.payments(t, o), queryError("payments")),
    documents: (kind, o) => Effect.mapError(rm.documents(t, kind, o), queryError("documents")),
    document: (kind, id) => Effect.mapError(rm.document(t, kind, id), queryError("document")),
    counts: () => Effect.mapError(rm.counts(t), queryError("counts"))
  }
}

