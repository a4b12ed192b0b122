/** The read models of one tenant: products, inventory, orders, payments, documents. */
import { Effect, Option } from "effect"
import type { HttpRouter } from "effect/http"
import { ReadModels } from "@ocs/read-models"
import { TenantStore } from "../TenantStore.ts"
import { type AdminOptions, existingTenant, guard, json, pageParams, pathParam, problem, queryText, searchParams } from "./AdminHttp.ts"

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const store = yield* TenantStore
    const readModels = yield* ReadModels.ReadModels
    const admin = guard(options)
    const existing = existingTenant(store)
    const base = "/admin/tenants/:appId/:businessId"

    /** A list route: the tenant, its page parameters and the route's own filters. */
    const list = <A>(path: string, read: (t: { readonly appId: string; readonly businessId: string }, params: URLSearchParams, page: { readonly limit: number | undefined; readonly after: string | undefined }) => Effect.Effect<A, unknown>) =>
      router.add("GET", `${base}/${path}` as `/${string}`, admin(Effect.gen(function*() {
        const t = yield* existing
        const params = yield* searchParams
        return json(yield* read(t, params, yield* pageParams(params)))
      })))

    /** A single-record route, 404 when the tenant has no such record. */
    const one = <A>(path: string, what: string, read: (t: { readonly appId: string; readonly businessId: string }, id: string) => Effect.Effect<Option.Option<A>, unknown>) =>
      router.add("GET", `${base}/${path}/:id` as `/${string}`, admin(Effect.gen(function*() {
        const t = yield* existing
        const id = yield* pathParam("id")
        const found = yield* read(t, id)
        return Option.isSome(found) ? json(found.value) : problem(404, `no ${what} ${id}`)
      })))

    yield* list("products", (t, params, page) =>
      Effect.flatMap(queryText(params, "search"), (search) => readModels.products(t, { ...page, search })))
    yield* one("products", "product", readModels.product)
    yield* list("inventory", (t, params) =>
      Effect.flatMap(queryText(params, "productId", 40), (productId) => Effect.map(readModels.inventory(t, productId), (items) => ({ items }))))
    yield* list("orders", (t, params, page) =>
      Effect.flatMap(
        Effect.all({ status: queryText(params, "status", 40), appOrderId: queryText(params, "appOrderId") }),
        (filters) => readModels.orders(t, { ...page, ...filters })
      ))
    yield* one("orders", "order", readModels.order)
    yield* list("payments", (t, params, page) =>
      Effect.flatMap(queryText(params, "orderId", 40), (orderId) => readModels.payments(t, { ...page, orderId })))
    yield* router.add("GET", `${base}/documents/:kind`, admin(Effect.gen(function*() {
      const t = yield* existing
      const kind = yield* pathParam("kind")
      return json(yield* readModels.documents(t, kind, yield* pageParams(yield* searchParams)))
    })))
  })
