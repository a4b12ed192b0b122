/**
 * What each list operation reads: per resource, its source of records (a table of the
 * business, or inventory of one depot), the filter its accepted filters build, and how a
 * record is written. A new list operation (bill/list, customer/list, ...) is one entry in
 * Operations.ts plus, for a new resource, one lister here.
 */
import * as Json from "@ocs/protocol/Json"
import { type Call, failure, type Messages, type Obj } from "./ApiCall.ts"
import { type Business, canonicalId, type Token } from "./Auth.ts"
import { ORDER_STATUSES } from "./Catalog.ts"
import type { SortValue, Source } from "./Listing.ts"
import type { ListOperation, Resource } from "./Operations.ts"
import { inventoryView, orderView, paymentView, productText } from "./Views.ts"

export const DEPRECATION_ORDER_PRIVATE_ID = "orderPrivateId is deprecated, use appOrderId"

export interface Lister<R> {
  readonly source: Source<R>
  readonly predicate: ((record: R) => boolean) | undefined
  readonly write: (record: R) => string
  /** Names the sort indexes of this source (one per depot for inventory). */
  readonly cacheKey: string
}

/** One list request, its filters already checked for shape by ApiList. */
export interface ListRequest {
  readonly call: Call
  readonly op: ListOperation
  readonly business: Business
  readonly token: Token
  readonly filters: Obj
  /** The updatedAtFrom/updatedAtTo test, when either was given. */
  readonly inTime: ((ms: number) => boolean) | undefined
  /** Field messages to add to (answered as ERR_INVALID_FORM_FIELDS). */
  readonly messages: Messages
  readonly warnings: Array<string>
}

/** The lister; undefined when `messages` say why not; "depot" when it already answered ERR_INVALID_DEPOT_ID. */
export type MakeLister = (req: ListRequest) => Lister<any> | undefined | "depot"

const tableSource = <R extends { readonly id: bigint; readonly updatedAtMs: number }>(
  table: {
    readonly positions: number
    at(pos: number): R | undefined
    idAt(pos: number): bigint
    posOf(id: bigint): number | undefined
    readonly base: bigint
    readonly version: number
  },
  extra: (record: R, field: string) => SortValue | undefined = () => undefined
): Source<R> => ({
  positions: () => table.positions,
  at: (pos) => table.at(pos),
  idAt: (pos) => table.idAt(pos),
  posOf: (id) => table.posOf(id),
  base: table.base,
  version: () => table.version,
  sortValue: (r, field) => field === "updatedAt" ? r.updatedAtMs : field === "id" ? r.id : extra(r, field) ?? ""
})

const asDepot = (v: Json.JsonValue | undefined): number | undefined =>
  typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : undefined

const depotNotGranted = (call: Call, depot: number): "depot" => {
  failure(call, "ERR_INVALID_DEPOT_ID", { "filters.depotId": `depot ${depot} was not granted to this token` })
  return "depot"
}

const product: MakeLister = ({ business, filters: f, inTime, messages }) => {
  const data = business.data
  const name = f["name"]
  if (name !== undefined && typeof name !== "string") messages["filters.name"] = "must be a string"
  const needle = typeof name === "string" && name !== "" ? name.toLowerCase() : undefined
  const predicate = needle === undefined && inTime === undefined ? undefined : (p: { name: string; updatedAtMs: number }) =>
    (needle === undefined || p.name.toLowerCase().includes(needle)) && (inTime === undefined || inTime(p.updatedAtMs))
  return {
    source: tableSource(data.products, (p, field) => field === "name" ? p.name : field === "price" ? p.price : undefined),
    predicate,
    write: productText,
    cacheKey: "product"
  }
}

const order: MakeLister = ({ call, business, token, filters: f, inTime, messages, warnings }) => {
  const data = business.data
  const appOrderIdFilter = f["appOrderId"]
  const privateId = f["orderPrivateId"]
  if (privateId !== undefined) warnings.push(DEPRECATION_ORDER_PRIVATE_ID)
  const wanted = appOrderIdFilter ?? privateId
  if (wanted !== undefined && typeof wanted !== "string") {
    messages[appOrderIdFilter !== undefined ? "filters.appOrderId" : "filters.orderPrivateId"] = "must be a string"
  }
  const status = f["status"]
  if (status !== undefined && (typeof status !== "string" || !(ORDER_STATUSES as ReadonlyArray<string>).includes(status))) {
    messages["filters.status"] = `must be one of ${ORDER_STATUSES.join(", ")}`
  }
  let depot: number | undefined
  if (f["depotId"] !== undefined) {
    depot = asDepot(f["depotId"])
    if (depot === undefined) messages["filters.depotId"] = "must be a positive integer"
    else if (!token.depots.includes(depot)) return depotNotGranted(call, depot)
  }
  const granted = new Set(token.depots)
  const allGranted = business.depots.every((d) => granted.has(d))
  const predicate = wanted === undefined && status === undefined && depot === undefined && inTime === undefined &&
      allGranted
    ? undefined
    : (o: { appOrderId: string; status: string; depotId: number; updatedAtMs: number }) =>
      (wanted === undefined || o.appOrderId === wanted) && (status === undefined || o.status === status) &&
      (depot === undefined ? granted.has(o.depotId) : o.depotId === depot) &&
      (inTime === undefined || inTime(o.updatedAtMs))
  return {
    source: tableSource(data.orders),
    predicate,
    write: (o) => Json.stringify(orderView(o)),
    cacheKey: "order"
  }
}

const payment: MakeLister = ({ business, filters: f, inTime, messages }) => {
  const data = business.data
  const orderId = f["orderId"]
  const wanted = orderId === undefined ? undefined : canonicalId(orderId)
  if (orderId !== undefined && wanted === undefined) messages["filters.orderId"] = "must be a positive integer"
  const wantedId = wanted === undefined ? undefined : BigInt(wanted)
  const predicate = wantedId === undefined && inTime === undefined ? undefined : (p: { orderId: bigint; updatedAtMs: number }) =>
    (wantedId === undefined || p.orderId === wantedId) && (inTime === undefined || inTime(p.updatedAtMs))
  return { source: tableSource(data.payments), predicate, write: (p) => Json.stringify(paymentView(p)), cacheKey: "payment" }
}

const inventory: MakeLister = ({ call, business, token, filters: f, inTime, messages }) => {
  const data = business.data
  const depot = asDepot(f["depotId"])
  if (f["depotId"] === undefined) messages["filters.depotId"] = "is required"
  else if (depot === undefined) messages["filters.depotId"] = "must be a positive integer"
  else if (!token.depots.includes(depot) || !business.depots.includes(depot)) return depotNotGranted(call, depot)
  if (depot === undefined) return undefined
  const products = data.products
  const source: Source<{ productId: bigint; updatedAtMs: number; depotId: number; quantity: number }> = {
    positions: () => products.positions,
    at: (pos) => data.inventoryAt(pos, depot),
    idAt: (pos) => products.idAt(pos),
    posOf: (id) => products.posOf(id),
    base: products.base,
    version: () => products.version * 1_000_003 + data.inventoryVersion,
    sortValue: (r, field) => field === "updatedAt" ? r.updatedAtMs : r.productId
  }
  const predicate = inTime === undefined ? undefined : (r: { updatedAtMs: number }) => inTime(r.updatedAtMs)
  return { source, predicate, write: (r) => Json.stringify(inventoryView(r)), cacheKey: `inventory:${depot}` }
}

export const listers: { readonly [R in Resource]: MakeLister } = { product, order, payment, inventory }
