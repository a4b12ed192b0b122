/**
 * Webhook deliveries: the envelope and the data of each documented event
 * (docs/api-catalogue.md §10).
 *
 * A delivery is a POST with a JSON body `{ event, businessId, webhooksVerifyToken, data }`;
 * businessId is absent for webhooksEnabled. v3 sends orders nested (`info`, `channel`, ...),
 * products in the product/detail shape, deletions as arrays of ids and stock changes as an
 * array of items; v2 payloads (flat orders, `{ id }` deletions, stock keyed by product id) are
 * still read. Known fields are typed and every other field is kept. An event name outside the
 * documented list is kept as `Unknown` (never dropped): the service may add events at any time.
 */
import { Result, Schema } from "effect"
import * as Ids from "./Ids.ts"
import * as Json from "./Json.ts"
import * as Records from "./Records.ts"

/** docs/api-catalogue.md, §10 Webhooks. */
export const EventName = Schema.Literals([
  "webhooksEnabled",
  "productAdd",
  "productUpdate",
  "productDelete",
  "inventoryChange",
  "orderAdd",
  "orderUpdate",
  "orderDelete",
  "orderPartialReturn",
  "paymentReceived",
  "appUninstalled"
])
export type EventName = typeof EventName.Type

export const eventNames: ReadonlyArray<EventName> = EventName.literals

const Rest = [Schema.Record(Schema.String, Schema.Unknown)] as const

/** docs/api-catalogue.md, §10 Webhooks. Extra top-level fields are kept. */
export const Envelope = Schema.StructWithRest(
  Schema.Struct({
    event: Schema.String,
    businessId: Schema.optional(Schema.NullOr(Ids.Id)),
    webhooksVerifyToken: Schema.optional(Schema.String),
    data: Schema.optional(Schema.Unknown)
  }),
  Rest
)
export type Envelope = typeof Envelope.Type

/** docs/api-catalogue.md, §10 Webhooks: `registeredEvents` maps a numeric id (string key) to a name. */
export const WebhooksEnabledData = Schema.StructWithRest(
  Schema.Struct({ registeredEvents: Schema.optional(Schema.Record(Schema.String, Schema.String)) }),
  Rest
)

/** The ids the API reference shows for registered events (others: not shown). */
export const knownEventIds: Readonly<Record<string, EventName>> = {
  "101": "productAdd",
  "102": "productUpdate",
  "110": "inventoryChange",
  "202": "orderUpdate"
}

/**
 * A deletion: v3 sends an array of ids, v2 an object with `id`. Either way, the ids deleted,
 * in the order sent.
 */
export const DeletedData = Schema.Union([
  Schema.Array(Ids.Id),
  Schema.StructWithRest(Schema.Struct({ id: Schema.optional(Schema.NullOr(Ids.Id)) }), Rest)
])
export type DeletedData = typeof DeletedData.Type

/** The ids a deletion names, in the order sent. */
export const deletedIds = (data: DeletedData): ReadonlyArray<Ids.IdString> =>
  Array.isArray(data) ? data : (data as { readonly id?: Ids.IdString | null }).id == null ? [] : [(data as { readonly id: Ids.IdString }).id]

/** Data schema of each known event. */
export const dataSchemas = {
  webhooksEnabled: WebhooksEnabledData,
  productAdd: Records.Product,
  productUpdate: Records.Product,
  productDelete: DeletedData,
  inventoryChange: Schema.Unknown,
  orderAdd: Records.Order,
  orderUpdate: Records.Order,
  orderDelete: DeletedData,
  orderPartialReturn: Records.Order,
  paymentReceived: Records.Payment,
  appUninstalled: Schema.Unknown
} as const

type DataOf = { readonly [K in EventName]: (typeof dataSchemas)[K]["Type"] }

/** A delivery of a known event, its data decoded. */
export type Known = {
  readonly [K in EventName]: {
    readonly _tag: "Known"
    readonly event: K
    readonly businessId: Ids.IdString | undefined
    readonly verifyToken: string | undefined
    readonly data: K extends "inventoryChange" ? ReadonlyArray<Records.InventoryItem> : DataOf[K]
  }
}[EventName]

/** A delivery whose event name the API reference does not list: kept whole. */
export interface Unknown {
  readonly _tag: "Unknown"
  readonly event: string
  readonly businessId: Ids.IdString | undefined
  readonly verifyToken: string | undefined
  readonly data: unknown
}

export type Delivery = Known | Unknown

/** Why a delivery could not be decoded. */
export class InvalidDelivery extends Schema.TaggedError<InvalidDelivery>()("InvalidDelivery", {
  message: Schema.String
}) {}

const decodeEnvelope = Schema.decodeUnknownResult(Envelope)
const decoders = Object.fromEntries(
  Object.entries(dataSchemas).map(([name, schema]) => [name, Schema.decodeUnknownResult(schema as Schema.Decoder<unknown>)])
) as Record<EventName, (u: unknown) => Result.Result<unknown, Schema.SchemaError>>
const decodeStock = Schema.decodeUnknownResult(Schema.Array(Records.InventoryItem))

const isEventName = (name: string): name is EventName => (eventNames as ReadonlyArray<string>).includes(name)

/**
 * inventoryChange may carry several products: v3 sends an array of items; v2 an object keyed
 * by product id (its values are the items); a `products` array or a single item are read too.
 * Always a list.
 */
const stockItems = (data: unknown): unknown => {
  if (Array.isArray(data)) return data
  if (typeof data === "object" && data !== null) {
    const record = data as Record<string, unknown>
    const products = record["products"]
    if (Array.isArray(products)) return products
    const keys = Object.keys(record)
    if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k) && typeof record[k] === "object" && record[k] !== null)) {
      return keys.map((k) => ({ id: k, ...(record[k] as object) }))
    }
    return [data]
  }
  return data
}

/**
 * docs/api-catalogue.md §10: an inventoryChange item names its depots in `depots[]` (or none:
 * the product's totals). An item with a flat `depotId` beside the product and no `depots[]` is
 * a shape the reference does not document: which stock its numbers are (that depot's, or the
 * totals) is unknown, so it is kept and flagged, never applied as a row.
 */
export const isFlatDepotItem = (item: unknown): boolean => {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return false
  const r = item as Record<string, unknown>
  const depotId = r["depotId"]
  const depots = r["depots"]
  return depotId !== undefined && depotId !== null && !(Array.isArray(depots) && depots.length > 0)
}

/**
 * Why a delivery's data is of a shape the reference does not document (undefined when it is
 * documented): today the flat-depot inventoryChange item (`isFlatDepotItem`).
 */
export const undocumentedShape = (event: string, data: unknown): string | undefined => {
  if (event !== "inventoryChange") return undefined
  const items = stockItems(data ?? {})
  if (!Array.isArray(items)) return undefined
  const flat = items.filter(isFlatDepotItem).length
  return flat === 0 ? undefined : `inventoryChange: ${flat} of ${items.length} item(s) with a flat depotId beside the product and no depots[] (undocumented shape; not applied)`
}

/** Decodes a parsed delivery body. */
export const decode = (value: unknown): Result.Result<Delivery, InvalidDelivery> => {
  const envelope = decodeEnvelope(value)
  if (Result.isFailure(envelope)) {
    return Result.fail(new InvalidDelivery({ message: `not a webhook envelope: ${envelope.failure.message}` }))
  }
  const e = envelope.success
  const businessId = e.businessId ?? undefined
  const verifyToken = e.webhooksVerifyToken
  if (!isEventName(e.event)) {
    return Result.succeed({ _tag: "Unknown", event: e.event, businessId, verifyToken, data: e.data })
  }
  const data = e.event === "inventoryChange"
    ? decodeStock(stockItems(e.data ?? {}))
    : decoders[e.event](e.data ?? {})
  if (Result.isFailure(data)) {
    return Result.fail(new InvalidDelivery({ message: `${e.event}: invalid data: ${data.failure.message}` }))
  }
  return Result.succeed({ _tag: "Known", event: e.event, businessId, verifyToken, data: data.success } as Known)
}

/** Parses and decodes a delivery from its exact text. */
export const decodeText = (text: string): Result.Result<Delivery, InvalidDelivery | Json.JsonError> =>
  Result.flatMap(Json.parse(text), (value) => decode(value))

/** docs/api-catalogue.md, Delivery rules 6: the source addresses deliveries come from (may change). */
export const defaultSourceAddresses: ReadonlyArray<string> = [
  "34.80.42.152",
  "34.80.130.93",
  "35.201.130.137",
  "34.80.32.50",
  "104.199.211.99"
]
