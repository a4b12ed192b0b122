/**
 * Commerce records as the API sends them, nested where it nests them (docs/api-catalogue.md:
 * product/list, order/list, bill/list, customer/list, business/depot, product/inventory,
 * product/category, product/brand, and the webhook payloads).
 *
 * Every field is optional and may be null: the reference documents fields, not guarantees.
 * Every object keeps the fields it does not name, as received (`StructWithRest`), so nothing
 * the service sends is dropped. Leaves are lenient in the ways real answers vary: numbers may
 * come as bigints (lossless parser) or numeric strings, ids as numbers or strings of digits.
 */
import { Schema } from "effect"
import * as Ids from "./Ids.ts"

const Rest = [Schema.Record(Schema.String, Schema.Unknown)] as const

const Opt = <S extends Schema.Top>(schema: S) => Schema.optional(Schema.NullOr(schema))

/** An object of documented fields that keeps every other field as received. */
const open = <F extends Schema.Struct.Fields>(fields: F) => Schema.StructWithRest(Schema.Struct(fields), Rest)

const isObject = (u: unknown): u is object => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * A nested object of a record (`info`, `prices`, an order line): typed by its documented
 * fields, checked only to be an object. Decoding every nested field costs about 14 µs an
 * order (measured) where this costs a fraction; and the object is kept as received (nothing
 * copied, nothing dropped). Its fields are read leniently where they are used
 * (`recordId`, `orderSummary`, `toNumber`), as an undocumented value there is no reason to
 * refuse the whole record.
 */
const nested = <F extends Schema.Struct.Fields>(fields: F) => {
  const shape = open(fields)
  return Schema.declare<typeof shape.Type>((u): u is typeof shape.Type => isObject(u))
}

/** A number as sent: a JSON number, a bigint from the lossless parser, or a numeric string. */
export const Amount = Schema.Union([Schema.Finite, Schema.BigInt, Schema.String])
export type Amount = typeof Amount.Type

/** A text field; some services send codes as numbers. */
const Text = Schema.Union([Schema.String, Schema.Finite, Schema.BigInt])

/** A unix-seconds instant (or whatever the service sent instead; read models normalise it). */
export const Instant = Schema.Union([Schema.Finite, Schema.BigInt, Schema.String])

/**
 * An id value as sent: an integer (number, bigint from the lossless parser, or a string of
 * digits) of at most 64 bits. Kept raw; `recordId` gives its canonical string. Ids may exceed
 * 2^53, never 64 bits: a 400-digit "id" is hostile input, and the record is kept as an
 * unknown event instead of becoming a row.
 */
const LIMIT_64 = 2n ** 64n
const RawId = Schema.Union([
  Schema.Number.check(Schema.isInt()),
  Schema.BigInt.check(Schema.makeFilter((n: bigint) => (n < LIMIT_64 && n > -LIMIT_64) || "an id of at most 64 bits")),
  Schema.String.check(Schema.isPattern(/^-?\d{1,20}$/))
])

/** A named reference, e.g. `{ id, name }` of a depot, a user, a brand. */
export const Ref = nested({ id: Opt(RawId), name: Opt(Text), code: Opt(Text) })

// ---------------------------------------------------------------------------------------------
// Stock
// ---------------------------------------------------------------------------------------------

const stockFields = {
  remain: Opt(Amount),
  shipping: Opt(Amount),
  damaged: Opt(Amount),
  holding: Opt(Amount),
  transfering: Opt(Amount),
  available: Opt(Amount),
  warranty: Opt(Schema.Unknown)
}

/** Stock of one depot inside a product's `inventory.depots`. */
export const DepotStock = nested({ id: Opt(RawId), ...stockFields })
export type DepotStock = typeof DepotStock.Type

/** A product's stock: totals and `depots` (only the depots granted to the token). */
export const Stock = nested({ ...stockFields, depots: Opt(Schema.Array(DepotStock)) })
export type Stock = typeof Stock.Type

// ---------------------------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------------------------

/** product/list record; the productAdd/productUpdate webhooks send the product/detail shape. */
export const Product = open({
  id: Opt(RawId),
  parentId: Opt(RawId),
  appProductId: Opt(Text),
  code: Opt(Text),
  barcode: Opt(Text),
  name: Opt(Text),
  otherName: Opt(Text),
  status: Opt(Amount),
  type: Opt(Schema.Unknown),
  categoryId: Opt(RawId),
  brandId: Opt(RawId),
  category: Opt(Ref),
  brand: Opt(Ref),
  prices: Opt(nested({ retail: Opt(Amount), wholesale: Opt(Amount), import: Opt(Amount), old: Opt(Amount), avgCost: Opt(Amount) })),
  inventory: Opt(Stock),
  createdAt: Opt(Instant),
  updatedAt: Opt(Instant)
})
export type Product = typeof Product.Type

/** product/inventory record: a product's stock, per depot. */
export const InventoryItem = open({
  productId: Opt(RawId),
  /** inventoryChange webhook items name the product `id`. */
  id: Opt(RawId),
  code: Opt(Text),
  barcode: Opt(Text),
  name: Opt(Text),
  ...stockFields,
  depots: Opt(Schema.Array(DepotStock)),
  /** product/inventory nests the stock (totals and depots) here; inventoryChange items do not. */
  inventory: Opt(Stock),
  updatedAt: Opt(Instant)
})
export type InventoryItem = typeof InventoryItem.Type

/** One stock level of a product in one depot (`depotId` "" for the product's totals). */
export interface StockLevel {
  readonly productId: string
  readonly depotId: string
  readonly remain: Amount | null
  readonly available: Amount | null
  /** The object the level was read from (a depot entry, or the item for totals). */
  readonly raw: Readonly<Record<string, unknown>>
  readonly updatedAt: unknown
}

/**
 * The stock levels an inventory item (or a product's `inventory`) carries: one per depot
 * listed, or the totals when it lists none. Items without a product id give none.
 */
export const stockLevels = (productId: string | undefined, stock: Stock | InventoryItem | null | undefined, updatedAt?: unknown): ReadonlyArray<StockLevel> => {
  if (productId === undefined || stock === null || stock === undefined) return []
  const depots = stock.depots
  if (depots !== null && depots !== undefined && depots.length > 0) {
    const out: Array<StockLevel> = []
    for (const d of depots) {
      const depotId = recordId(d)
      if (depotId === undefined) continue
      out.push({ productId, depotId, remain: d.remain ?? null, available: d.available ?? null, raw: d, updatedAt })
    }
    return out
  }
  return [{ productId, depotId: "", remain: stock.remain ?? null, available: stock.available ?? null, raw: stock, updatedAt }]
}

export const Category = open({
  id: Opt(RawId),
  parentId: Opt(RawId),
  code: Opt(Text),
  name: Opt(Text),
  order: Opt(Amount),
  status: Opt(Amount)
})
export type Category = typeof Category.Type

export const Brand = open({
  id: Opt(RawId),
  parentId: Opt(RawId),
  code: Opt(Text),
  name: Opt(Text),
  status: Opt(Amount),
  createdAt: Opt(Instant)
})
export type Brand = typeof Brand.Type

// ---------------------------------------------------------------------------------------------
// Orders
// ---------------------------------------------------------------------------------------------

/** One line of an order (`products[]`). */
export const OrderLine = nested({
  productId: Opt(RawId),
  code: Opt(Text),
  name: Opt(Text),
  appProductId: Opt(Text),
  quantity: Opt(Amount),
  price: Opt(Amount),
  discount: Opt(Amount),
  totalAmount: Opt(Amount)
})
export type OrderLine = typeof OrderLine.Type

/** order/list record and the orderAdd/orderUpdate webhook data (v3, nested). */
export const Order = open({
  info: Opt(nested({
    id: Opt(RawId),
    depotId: Opt(RawId),
    type: Opt(Amount),
    status: Opt(Amount),
    createdAt: Opt(Instant),
    updatedAt: Opt(Instant),
    description: Opt(Text)
  })),
  channel: Opt(nested({ appOrderId: Opt(Text), saleChannel: Opt(Amount), shopId: Opt(RawId), shopName: Opt(Text) })),
  shippingAddress: Opt(nested({ id: Opt(RawId), name: Opt(Text), mobile: Opt(Text), email: Opt(Text), address: Opt(Text) })),
  products: Opt(Schema.Array(OrderLine)),
  carrier: Opt(nested({ id: Opt(RawId), name: Opt(Text), shipFee: Opt(Amount), codFee: Opt(Amount), customerShipFee: Opt(Amount) })),
  payment: Opt(nested({
    codAmount: Opt(Amount),
    transfer: Opt(nested({ amount: Opt(Amount) })),
    deposit: Opt(nested({ amount: Opt(Amount) })),
    credit: Opt(nested({ amount: Opt(Amount) })),
    discount: Opt(nested({ amount: Opt(Amount) }))
  })),
  /** Flat v2 fields, still sent by older accounts: kept readable. */
  id: Opt(RawId),
  appOrderId: Opt(Text),
  orderPrivateId: Opt(Text),
  customerName: Opt(Text),
  customerMobile: Opt(Text),
  status: Opt(Amount),
  updatedAt: Opt(Instant)
})
export type Order = typeof Order.Type

const textOf = (v: unknown): string | undefined =>
  typeof v === "string" ? v : typeof v === "number" || typeof v === "bigint" ? String(v) : undefined

/** appOrderId (`channel.appOrderId`), falling back to the flat v2 field and its deprecated alias. */
export const appOrderIdOf = (order: Order): string | undefined =>
  textOf(order.channel?.appOrderId) ?? textOf(order.appOrderId) ?? textOf(order.orderPrivateId)

/** The order's id: `info.id`, or the flat v2 `id`. */
export const orderIdOf = (order: Order): string | undefined => recordId(order, "info.id") ?? recordId(order, "id")

/** The fields read models and plugins query, read once from the nested record. */
export const orderSummary = (order: Order) => {
  const lines = order.products ?? []
  let total = 0
  for (const l of lines) {
    const t = toNumber(l.totalAmount) ?? (toNumber(l.price) ?? 0) * (toNumber(l.quantity) ?? 0) - (toNumber(l.discount) ?? 0)
    total += t
  }
  return {
    id: orderIdOf(order),
    appOrderId: appOrderIdOf(order),
    type: textOf(order.info?.type),
    status: textOf(order.info?.status) ?? textOf(order.status),
    saleChannel: textOf(order.channel?.saleChannel),
    depotId: recordId(order, "info.depotId"),
    customerId: recordId(order, "shippingAddress.id"),
    customerName: textOf(order.shippingAddress?.name) ?? textOf(order.customerName),
    customerMobile: textOf(order.shippingAddress?.mobile) ?? textOf(order.customerMobile),
    lineCount: lines.length,
    total,
    createdAt: order.info?.createdAt ?? undefined,
    updatedAt: order.info?.updatedAt ?? order.updatedAt ?? undefined
  }
}

// ---------------------------------------------------------------------------------------------
// Bills, customers, depots
// ---------------------------------------------------------------------------------------------

/** One line of a bill (`products[]`). */
export const BillLine = nested({
  id: Opt(RawId),
  imexId: Opt(RawId),
  code: Opt(Text),
  name: Opt(Text),
  quantity: Opt(Amount),
  price: Opt(Amount),
  discount: Opt(Amount),
  vat: Opt(Amount),
  amount: Opt(Amount)
})
export type BillLine = typeof BillLine.Type

/** bill/list (and bill/retail) record: a stock movement or sale document. */
export const Bill = open({
  id: Opt(RawId),
  orderId: Opt(RawId),
  depotId: Opt(RawId),
  date: Opt(Text),
  type: Opt(Amount),
  mode: Opt(Amount),
  customer: Opt(nested({ id: Opt(RawId), name: Opt(Text), mobile: Opt(Text), address: Opt(Text) })),
  created: Opt(nested({ id: Opt(RawId), name: Opt(Text), createdAt: Opt(Instant) })),
  products: Opt(Schema.Array(BillLine)),
  // docs/api-catalogue.md §5.1: `transfer{accountId, name, amount}`, `cash{…}` are objects.
  payment: Opt(nested({
    amount: Opt(Amount),
    customerAmount: Opt(Amount),
    discount: Opt(Amount),
    cash: Opt(nested({ amount: Opt(Amount) })),
    transfer: Opt(nested({ accountId: Opt(RawId), name: Opt(Text), amount: Opt(Amount) }))
  })),
  description: Opt(Text),
  createdAt: Opt(Instant)
})
export type Bill = typeof Bill.Type

export const Customer = open({
  id: Opt(RawId),
  type: Opt(Amount),
  code: Opt(Text),
  name: Opt(Text),
  mobile: Opt(Text),
  email: Opt(Text),
  gender: Opt(Amount),
  address: Opt(Text),
  birthday: Opt(Text),
  points: Opt(Amount),
  totalAmount: Opt(Amount),
  level: Opt(Ref),
  group: Opt(Ref),
  updatedAt: Opt(Instant)
})
export type Customer = typeof Customer.Type

export const Depot = open({
  id: Opt(RawId),
  code: Opt(Text),
  name: Opt(Text),
  mobile: Opt(Text),
  location: Opt(nested({ cityName: Opt(Text), districtName: Opt(Text), wardName: Opt(Text), address: Opt(Text) }))
})
export type Depot = typeof Depot.Type

// ---------------------------------------------------------------------------------------------
// Payments (the v2 paymentReceived webhook) and anything else
// ---------------------------------------------------------------------------------------------

/** paymentReceived data: not documented beyond its name; id and the paid document are likely keys. */
export const Payment = open({
  id: Opt(RawId),
  orderId: Opt(RawId),
  invoiceId: Opt(RawId),
  amount: Opt(Amount),
  method: Opt(Text),
  updatedAt: Opt(Instant)
})
export type Payment = typeof Payment.Type

/** Any other record (a resource without a typed read model): a JSON object kept whole. */
export const AnyRecord = Schema.Record(Schema.String, Schema.Unknown)
export type AnyRecord = typeof AnyRecord.Type

/** The value at a dotted path (`info.id`) of a record, if every step is an object. */
export const valueAt = (record: unknown, path: string): unknown => {
  let at: unknown = record
  for (const key of path.split(".")) {
    if (typeof at !== "object" || at === null || Array.isArray(at)) return undefined
    at = (at as Record<string, unknown>)[key]
  }
  return at
}

/** The id of a record under its id field (a dotted path), as a canonical string. */
export const recordId = (record: unknown, idField = "id"): Ids.IdString | string | undefined => {
  const value = idField.includes(".") ? valueAt(record, idField) : (record as Record<string, unknown> | null)?.[idField]
  return Ids.normalize(value) ?? (typeof value === "string" && value.length > 0 ? value : undefined)
}

/** A finite number from an amount as sent, or undefined. */
export const toNumber = (value: unknown): number | undefined => {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined
  if (typeof value === "bigint") return Number(value)
  if (typeof value === "string" && value.trim() !== "") {
    const n = Number(value)
    return Number.isFinite(n) ? n : undefined
  }
  return undefined
}
