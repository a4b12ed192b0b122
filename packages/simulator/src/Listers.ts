/**
 * What each typed read answers from the world (docs/api-catalogue.md): its source of records
 * (a table of the business), the predicate its documented filters build, and how a record is
 * written. Filters are already checked for kind by ListFilters.ts; depots named in filters
 * must be granted to the token (Authentication rule 5), and records of depots not granted are
 * not listed.
 */
import * as Json from "@ocs/protocol/Json"
import { type Call, failure, isObj, type Messages, type Obj } from "./ApiCall.ts"
import type { Business, Token } from "./Auth.ts"
import type { Bill, Customer, Deletion, Order, Product, Table } from "./Catalog.ts"
import type { CheckedFilters, Range } from "./ListFilters.ts"
import type { SortValue, Source } from "./Listing.ts"
import type { ListOperation, Typed } from "./Operations.ts"
import {
  billView,
  brandView,
  categoryView,
  customerView,
  depotView,
  inventoryItemView,
  orderView,
  productView
} from "./Views.ts"

/** The text of the deprecation warning (docs/api-catalogue.md §3.4, typo as documented). */
export const DEPRECATION_ORDER_PRIVATE_ID = "orderPrivateId is deprected, you should use appOrderId"

export interface Lister<R> {
  readonly source: Source<R>
  readonly predicate: ((record: R) => boolean) | undefined
  readonly write: (record: R) => string
  /** Names the sort indexes of this source. */
  readonly cacheKey: string
}

/** One list request, its filters already checked by ListFilters. */
export interface ListRequest {
  readonly call: Call
  readonly op: ListOperation
  readonly business: Business
  readonly token: Token
  readonly checked: CheckedFilters
  /** Field messages to add to (answered as ERR_INVALID_FORM_FIELDS). */
  readonly messages: Messages
  readonly warnings: Array<string>
}

/** The lister; "depot" when it already answered ERR_INVALID_DEPOT_ID. */
export type MakeLister = (req: ListRequest) => Lister<any> | "depot"

const tableSource = <R extends { readonly id: bigint }>(
  table: Table<R>,
  sortValue: (record: R, field: string) => SortValue | undefined = () => undefined,
  version: () => number = () => table.version
): Source<R> => ({
  positions: () => table.positions,
  at: (pos) => table.at(pos),
  idAt: (pos) => table.idAt(pos),
  posOf: (id) => table.posOf(id),
  base: table.base,
  version,
  sortValue: (r, field) => field === "id" ? r.id : sortValue(r, field) ?? ""
})

/** Every test of a predicate, or undefined when there is none (no filtering: a faster scan). */
const all = <R>(tests: ReadonlyArray<((r: R) => boolean) | undefined>): ((r: R) => boolean) | undefined => {
  const live = tests.filter((t): t is (r: R) => boolean => t !== undefined)
  return live.length === 0 ? undefined : (r) => live.every((t) => t(r))
}

const bigSet = (v: Json.JsonValue | undefined): Set<bigint> | undefined =>
  Array.isArray(v) ? new Set(v.map((x) => BigInt(x as number | bigint))) : undefined
const numSet = (v: Json.JsonValue | undefined): Set<number> | undefined =>
  Array.isArray(v) ? new Set(v.map((x) => Number(x))) : v === undefined || v === null ? undefined : new Set([Number(v)])
const inRange = (range: Range | undefined, ms: (r: any) => number) =>
  range === undefined ? undefined : (r: any) => ms(r) >= range.from && ms(r) <= range.to
const text = (v: Json.JsonValue | undefined): string | undefined => typeof v === "string" && v !== "" ? v : undefined

/** Depots the token may see in this business. */
const grantedDepots = (business: Business, token: Token): ReadonlyArray<number> =>
  business.depots.filter((d) => token.depots.includes(d))

/** `filters.depotIds` checked against the grant; "depot" once ERR_INVALID_DEPOT_ID was answered. */
const depotFilter = (call: Call, f: Obj, granted: ReadonlyArray<number>): ReadonlyArray<number> | undefined | "depot" => {
  const wanted = numSet(f["depotIds"])
  if (wanted === undefined || wanted.size === 0) return undefined
  const refused = [...wanted].filter((d) => !granted.includes(d))
  if (refused.length > 0) {
    failure(call, "ERR_INVALID_DEPOT_ID", { "filters.depotIds": `depot ${refused.join(", ")} was not granted to this token` })
    return "depot"
  }
  return [...wanted]
}

const productTests = (f: Obj, updated: Range | undefined) => {
  const ids = bigSet(f["ids"])
  const needle = text(f["name"])?.toLowerCase()
  const categories = numSet(f["categoryIds"] ?? f["categoryId"])
  const brands = numSet(f["brandIds"])
  const statuses = numSet(f["status"])
  const price = isObj(f["price"]) ? f["price"] : undefined
  const from = typeof price?.["from"] === "number" ? price["from"] : undefined
  const to = typeof price?.["to"] === "number" ? price["to"] : undefined
  return all<Product>([
    ids && ((p) => ids.has(p.id)),
    needle === undefined ? undefined : (p) =>
      p.name.toLowerCase().includes(needle) || p.code.toLowerCase().includes(needle) || p.barcode.includes(needle),
    categories && ((p) => categories.has(p.categoryId)),
    brands && ((p) => brands.has(p.brandId)),
    statuses && ((p) => statuses.has(p.status)),
    from === undefined && to === undefined ? undefined : (p) => (from === undefined || p.price >= from) && (to === undefined || p.price <= to),
    inRange(updated, (p: Product) => p.updatedAtMs)
  ])
}

// Records hold bigint ids: `stringifyParsed` goes straight to the bigint-aware writer instead
// of trying the plain one first, which throws on the first bigint (product/list: 4,657 -> 8,115 pages/s).
const product: MakeLister = ({ business, token, checked }) => {
  const data = business.data
  const depots = grantedDepots(business, token)
  return {
    source: tableSource(data.products, (p, field) =>
      field === "name" ? p.name : field === "price" ? p.price : field === "updatedAt" ? p.updatedAtMs : undefined),
    predicate: productTests(checked.filters, checked.updated),
    write: (p: Product) => Json.stringifyParsed(productView(data, p, depots)),
    cacheKey: "product"
  }
}

const inventory: MakeLister = ({ call, business, token, checked }) => {
  const data = business.data
  const depots = depotFilter(call, checked.filters, grantedDepots(business, token))
  if (depots === "depot") return "depot"
  const shown = depots ?? grantedDepots(business, token)
  return {
    source: tableSource(data.products, undefined, () => data.products.version * 1_000_003 + data.stockVersion),
    predicate: productTests(checked.filters, checked.updated),
    write: (p: Product) => Json.stringifyParsed(inventoryItemView(data, p, shown)),
    cacheKey: "inventory"
  }
}

const order: MakeLister = ({ call, business, token, checked, warnings }) => {
  const f = checked.filters
  const granted = grantedDepots(business, token)
  const depots = depotFilter(call, f, granted)
  if (depots === "depot") return "depot"
  const privateId = text(f["orderPrivateId"])
  if (f["orderPrivateId"] !== undefined) warnings.push(DEPRECATION_ORDER_PRIVATE_ID)
  const ids = bigSet(f["ids"])
  const statuses = numSet(f["statuses"])
  const channels = numSet(f["saleChannels"])
  const type = typeof f["type"] === "number" ? f["type"] : undefined
  const address = isObj(f["shippingAddress"]) ? f["shippingAddress"] : undefined
  const customerId = address?.["id"] === undefined ? undefined : BigInt(address["id"] as number)
  const mobile = text(address?.["mobile"])
  const carrier = isObj(f["carrier"]) && typeof f["carrier"]["id"] === "number" ? f["carrier"]["id"] : undefined
  const visible = new Set(depots ?? granted)
  const allVisible = depots === undefined && business.depots.every((d) => visible.has(d))
  return {
    source: tableSource(business.data.orders, (o, field) => field === "updatedAt" ? o.updatedAtMs : undefined),
    predicate: all<Order>([
      allVisible ? undefined : (o) => visible.has(o.depotId),
      ids && ((o) => ids.has(o.id)),
      statuses && ((o) => statuses.has(o.status)),
      channels && ((o) => channels.has(o.saleChannel)),
      type === undefined ? undefined : (o) => o.type === type,
      customerId === undefined ? undefined : (o) => o.customerId === customerId,
      mobile === undefined ? undefined : (o) => o.customerMobile === mobile,
      carrier === undefined ? undefined : (o) => o.carrierId === carrier,
      privateId === undefined ? undefined : (o) => o.appOrderId === privateId,
      inRange(checked.window, (o: Order) => o.createdAtMs),
      inRange(checked.updated, (o: Order) => o.updatedAtMs)
    ]),
    write: (o: Order) => Json.stringifyParsed(orderView(o)),
    cacheKey: "order"
  }
}

const bill: MakeLister = ({ call, business, token, checked }) => {
  const f = checked.filters
  const granted = grantedDepots(business, token)
  const depots = depotFilter(call, f, granted)
  if (depots === "depot") return "depot"
  const ids = bigSet(f["ids"])
  const orderIds = bigSet(f["orderIds"])
  const modes = numSet(f["modes"])
  const type = typeof f["type"] === "number" ? f["type"] : undefined
  const customerId = f["customerId"] === undefined ? undefined : BigInt(f["customerId"] as number)
  const mobile = text(f["customerMobile"])
  const visible = new Set(depots ?? granted)
  return {
    source: tableSource(business.data.bills),
    predicate: all<Bill>([
      business.depots.every((d) => visible.has(d)) ? undefined : (b) => visible.has(b.depotId),
      ids && ((b) => ids.has(b.id)),
      orderIds && ((b) => b.orderId !== undefined && orderIds.has(b.orderId)),
      modes && ((b) => modes.has(b.mode)),
      type === undefined ? undefined : (b) => b.type === type,
      customerId === undefined ? undefined : (b) => b.customerId === customerId,
      mobile === undefined ? undefined : (b) => b.customerMobile === mobile,
      inRange(checked.window, (b: Bill) => b.createdAtMs)
    ]),
    write: (b: Bill) => Json.stringifyParsed(billView(b)),
    cacheKey: "bill"
  }
}

const customer: MakeLister = ({ business, checked }) => {
  const f = checked.filters
  const ids = bigSet(f["ids"])
  const mobile = text(f["mobile"])
  const type = typeof f["type"] === "number" ? f["type"] : undefined
  return {
    source: tableSource(business.data.customers),
    predicate: all<Customer>([
      ids && ((c) => ids.has(c.id)),
      mobile === undefined ? undefined : (c) => c.mobile === mobile,
      type === undefined ? undefined : (c) => c.type === type,
      inRange(checked.updated, (c: Customer) => c.updatedAtMs)
    ]),
    write: (c: Customer) => Json.stringifyParsed(customerView(c)),
    cacheKey: "customer"
  }
}

/** Named references (categories, brands): ids, name (substring), code, status. */
const referenceTests = (f: Obj) => {
  const ids = bigSet(f["ids"])
  const name = text(f["name"])?.toLowerCase()
  const code = text(f["code"])
  const status = typeof f["status"] === "number" ? f["status"] : undefined
  return all<{ id: bigint; name: string; code: string; status: number }>([
    ids && ((r) => ids.has(r.id)),
    name === undefined ? undefined : (r) => r.name.toLowerCase().includes(name),
    code === undefined ? undefined : (r) => r.code === code,
    status === undefined ? undefined : (r) => r.status === status
  ])
}

const category: MakeLister = ({ business, checked }) => ({
  source: tableSource(business.data.categories),
  predicate: referenceTests(checked.filters),
  write: (c) => Json.stringify(categoryView(c)),
  cacheKey: "category"
})

const brand: MakeLister = ({ business, checked }) => ({
  source: tableSource(business.data.brands),
  predicate: referenceTests(checked.filters),
  write: (b) => Json.stringify(brandView(b)),
  cacheKey: "brand"
})

/** The token's depots, as records with ids as positions (depot ids are small integers). */
const depot: MakeLister = ({ business, token, checked }) => {
  const granted = grantedDepots(business, token)
  const ids = numSet(checked.filters["ids"])
  const shown = new Set(granted.filter((d) => ids === undefined || ids.size === 0 || ids.has(d)))
  const top = Math.max(0, ...business.depots) + 1
  const source: Source<{ id: bigint }> = {
    positions: () => top,
    at: (pos) => (shown.has(pos) ? { id: BigInt(pos) } : undefined),
    idAt: (pos) => BigInt(pos),
    posOf: (id) => (id >= 0n && id < BigInt(top) ? Number(id) : undefined),
    base: 0n,
    version: () => 0,
    sortValue: (r) => r.id
  }
  return { source, predicate: undefined, write: (r) => Json.stringify(depotView(Number(r.id))), cacheKey: "depot" }
}

/**
 * order/deleted and bill/deleted (docs/api-catalogue.md §3.3, §5.3): the business's deletion log,
 * oldest first, as `{id, createdAt, createdById}` (the record deleted, when in unix seconds, by
 * whom). Positions are the log's; `ids` names deleted records, `createdAtFrom/To` the deletion
 * time.
 */
const deletionFeed = (which: "order" | "bill"): MakeLister => ({ business, checked }) => {
  const log = business.data.deletions[which]
  const ids = bigSet(checked.filters["ids"])
  const source: Source<Deletion & { readonly pos: number }> = {
    positions: () => log.length,
    at: (pos) => (pos >= 0 && pos < log.length ? { ...log[pos]!, pos } : undefined),
    idAt: (pos) => BigInt(pos),
    posOf: (id) => (id >= 0n && id < BigInt(log.length) ? Number(id) : undefined),
    base: 0n,
    version: () => log.length,
    sortValue: (r) => BigInt(r.pos)
  }
  return {
    source,
    predicate: all<Deletion>([
      ids && ((d) => ids.has(d.id)),
      inRange(checked.updated, (d: Deletion) => d.atMs)
    ]),
    write: (d) => Json.stringifyParsed({ id: d.id, createdAt: Math.floor(d.atMs / 1000), createdById: d.byId }),
    cacheKey: `${which}Deleted`
  }
}

export const listers: { readonly [T in Typed]: MakeLister } = {
  product, inventory, order, bill, customer, depot, category, brand,
  orderDeleted: deletionFeed("order"),
  billDeleted: deletionFeed("bill")
}
