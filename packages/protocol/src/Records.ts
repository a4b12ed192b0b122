/**
 * Commerce records as far as the spec shows them.
 *
 * spec: Resources: full field lists of product, order, invoice, warranty slip, inventory and
 * payment records are "not shown". So each schema types the fields that are shown (all
 * optional unless the spec makes them certain) and keeps every other field as received
 * (`StructWithRest`): nothing the service sends is dropped.
 */
import { Schema } from "effect"
import * as Ids from "./Ids.ts"

const Rest = [Schema.Record(Schema.String, Schema.Unknown)] as const

const Opt = <S extends Schema.Top>(schema: S) => Schema.optional(Schema.NullOr(schema))

/** A number as sent (JSON number; a bigint from the lossless parser is accepted too). */
export const Amount = Schema.Union([Schema.Finite, Schema.BigInt])

/** spec: Product: appProductId, id, code, barcode, name, price. */
export const Product = Schema.StructWithRest(
  Schema.Struct({
    id: Opt(Ids.Id),
    appProductId: Opt(Schema.String),
    code: Opt(Schema.String),
    barcode: Opt(Schema.String),
    name: Opt(Schema.String),
    price: Opt(Amount),
    updatedAt: Opt(Schema.Unknown)
  }),
  Rest
)
export type Product = typeof Product.Type

/** spec: Order: customerName, customerMobile, products (lines), appOrderId (orderPrivateId deprecated). */
export const Order = Schema.StructWithRest(
  Schema.Struct({
    id: Opt(Ids.Id),
    appOrderId: Opt(Schema.String),
    /** Deprecated alias of appOrderId (spec: Order). Read through `appOrderIdOf`. */
    orderPrivateId: Opt(Schema.String),
    customerName: Opt(Schema.String),
    customerMobile: Opt(Schema.String),
    products: Opt(Schema.Array(Schema.Unknown)),
    status: Opt(Schema.Unknown),
    updatedAt: Opt(Schema.Unknown)
  }),
  Rest
)
export type Order = typeof Order.Type

/** appOrderId, falling back to its deprecated alias orderPrivateId (spec: Order). */
export const appOrderIdOf = (order: { readonly appOrderId?: string | null | undefined; readonly orderPrivateId?: string | null | undefined }) =>
  order.appOrderId ?? order.orderPrivateId ?? undefined

/** Payment: fields not shown; id and the paid document are the likely keys. */
export const Payment = Schema.StructWithRest(
  Schema.Struct({
    id: Opt(Ids.Id),
    orderId: Opt(Ids.Id),
    invoiceId: Opt(Ids.Id),
    amount: Opt(Amount),
    method: Opt(Schema.String),
    updatedAt: Opt(Schema.Unknown)
  }),
  Rest
)
export type Payment = typeof Payment.Type

/** A stock level: fields not shown beyond "the stock of a product changes". */
export const StockLevel = Schema.StructWithRest(
  Schema.Struct({
    productId: Opt(Ids.Id),
    id: Opt(Ids.Id),
    depotId: Opt(Ids.Id),
    quantity: Opt(Amount),
    available: Opt(Amount)
  }),
  Rest
)
export type StockLevel = typeof StockLevel.Type

/** Any other record (invoice, warranty slip, ...): a JSON object kept whole. */
export const AnyRecord = Schema.Record(Schema.String, Schema.Unknown)
export type AnyRecord = typeof AnyRecord.Type

/** The id of a record under its id field, as a canonical string. */
export const recordId = (record: Readonly<Record<string, unknown>>, idField = "id"): Ids.IdString | string | undefined => {
  const value = record[idField]
  return Ids.normalize(value) ?? (typeof value === "string" && value.length > 0 ? value : undefined)
}
