/**
 * The read models of one tenant: products, stock, orders, bills, customers, depots, categories,
 * brands, payments, documents, and the page service's (pages, users, tags, conversations, their
 * messages, page customers). Every filter is bounded and checked: bad input is a 400. They read
 * the server's SQLite file, or the PostgreSQL copy with `readModels.store: postgres`.
 */
import { Effect, Option } from "effect"
import type { HttpRouter } from "effect/http"
import { ReadApi, ReadModels } from "@ocs/read-models"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import {
  type AdminOptions,
  existingTenant,
  guard,
  json,
  pageParams,
  pathParam,
  problem,
  queryBool,
  queryCode,
  queryDay,
  queryId,
  queryMillis,
  queryText,
  searchParams
} from "./AdminHttp.ts"

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    // The server's own file, unless the read API is given (`readModels.store: postgres`).
    const given = yield* Effect.serviceOption(ReadApi.ReadApiService)
    const readModels: ReadApi.ReadApi = Option.isSome(given) ? given.value : yield* ReadModels.ReadModels
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
      Effect.flatMap(
        Effect.all({ search: queryText(params, "search"), includeDeleted: queryBool(params, "includeDeleted") }),
        (filters) => readModels.products(t, { ...page, ...filters })
      ))
    yield* one("products", "product", readModels.product)
    yield* list("inventory", (t, params) =>
      Effect.flatMap(
        // depotId "" (no depot) selects products' totals, so it is text here, not an id.
        Effect.all({ productId: queryId(params, "productId"), depotId: queryText(params, "depotId", 40) }),
        (filters) => Effect.map(readModels.inventory(t, filters), (items) => ({ items }))
      ))
    yield* list("orders", (t, params, page) =>
      Effect.flatMap(
        Effect.all({
          status: queryCode(params, "status"),
          saleChannel: queryCode(params, "saleChannel"),
          depotId: queryId(params, "depotId"),
          customerMobile: queryText(params, "customerMobile", 40),
          createdFromMs: queryMillis(params, "createdFromMs"),
          createdToMs: queryMillis(params, "createdToMs"),
          updatedFromMs: queryMillis(params, "updatedFromMs"),
          updatedToMs: queryMillis(params, "updatedToMs"),
          appOrderId: queryText(params, "appOrderId"),
          includeDeleted: queryBool(params, "includeDeleted")
        }),
        (filters) => readModels.orders(t, { ...page, ...filters })
      ))
    yield* one("orders", "order", readModels.order)
    yield* list("bills", (t, params, page) =>
      Effect.flatMap(
        Effect.all({
          type: queryCode(params, "type"),
          depotId: queryId(params, "depotId"),
          customerId: queryId(params, "customerId"),
          fromDate: queryDay(params, "fromDate"),
          toDate: queryDay(params, "toDate"),
          includeDeleted: queryBool(params, "includeDeleted")
        }),
        (filters) => readModels.bills(t, { ...page, ...filters })
      ))
    yield* one("bills", "bill", readModels.bill)
    yield* list("customers", (t, params, page) =>
      Effect.flatMap(
        Effect.all({ search: queryText(params, "search"), mobile: queryText(params, "mobile", 40), includeDeleted: queryBool(params, "includeDeleted") }),
        (filters) => readModels.customers(t, { ...page, ...filters })
      ))
    yield* one("customers", "customer", readModels.customer)
    yield* list("depots", (t) => Effect.map(readModels.depots(t), (items) => ({ items })))
    yield* list("categories", (t) => Effect.map(readModels.categories(t), (items) => ({ items })))
    yield* list("brands", (t) => Effect.map(readModels.brands(t), (items) => ({ items })))
    yield* list("payments", (t, params, page) =>
      Effect.flatMap(queryText(params, "orderId", 40), (orderId) => readModels.payments(t, { ...page, orderId })))
    yield* router.add("GET", `${base}/documents/:kind`, admin(Effect.gen(function*() {
      const t = yield* existing
      const kind = yield* pathParam("kind")
      return json(yield* readModels.documents(t, kind, yield* pageParams(yield* searchParams)))
    })))

    // The page service (docs/api-catalogue.md §9).
    yield* list("vpage/pages", (t) => Effect.map(readModels.vpagePages(t), (items) => ({ items })))
    yield* list("vpage/users", (t) => Effect.map(readModels.vpageUsers(t), (items) => ({ items })))
    yield* list("vpage/tags", (t) => Effect.map(readModels.vpageTags(t), (items) => ({ items })))
    yield* list("vpage/conversations", (t, params, page) =>
      Effect.flatMap(
        Effect.all({ pageId: queryId(params, "pageId"), status: queryCode(params, "status") }),
        (filters) => readModels.vpageConversations(t, { ...page, ...filters })
      ))
    yield* one("vpage/conversations", "conversation", readModels.vpageConversation)
    yield* router.add("GET", `${base}/vpage/conversations/:id/messages`, admin(Effect.gen(function*() {
      const t = yield* existing
      const id = yield* pathParam("id")
      return json(yield* readModels.vpageMessages(t, id, yield* pageParams(yield* searchParams)))
    })))
    yield* list("vpage/customers", (t, params, page) =>
      Effect.flatMap(queryId(params, "pageId"), (pageId) => readModels.vpageCustomers(t, { ...page, pageId })))
  })
