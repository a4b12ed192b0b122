/**
 * The kinds of command of the write path as data (docs/architecture.md §4.31), like the read
 * side's operations: for each, the write operation it calls, the Schema of its payload (one
 * entity, from docs/api-catalogue.md), the request body it sends, where the answer names the
 * entity, and how an effect whose answer was lost is found again (`identity`).
 *
 * Pure: the engine (`@ocs/commands`) sends and resolves; the plugin SDK types `ctx.commands`
 * from the same schemas.
 */
import { Schema } from "effect"
import * as Catalogue from "./Catalogue.ts"
import * as Ids from "./Ids.ts"
import * as Operation from "./Operation.ts"
import * as Records from "./Records.ts"

// ---------------------------------------------------------------------------------------------
// Payload pieces
// ---------------------------------------------------------------------------------------------

const Text = Schema.String.check(Schema.isNonEmpty())
const Amount = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
const Quantity = Schema.Finite.check(Schema.isGreaterThan(0))
/** An id as the caller gives it: digits (text keeps ids beyond 2^53 exact) or a safe integer. */
const IdInput = Schema.Union([Schema.String.check(Schema.isPattern(/^[1-9][0-9]*$/)), Schema.Int.check(Schema.isGreaterThan(0))])
const TagIds = Schema.Array(IdInput).check(Schema.isMaxLength(30))

/** docs/api-catalogue.md §2.3: one product of `product/add`. */
export const ProductAdd = Schema.Struct({
  appProductId: Text,
  name: Text,
  code: Schema.optionalKey(Schema.String),
  barcode: Schema.optionalKey(Schema.String),
  price: Schema.optionalKey(Amount),
  oldPrice: Schema.optionalKey(Amount),
  importPrice: Schema.optionalKey(Amount),
  wholesalePrice: Schema.optionalKey(Amount),
  vat: Schema.optionalKey(Amount),
  status: Schema.optionalKey(Schema.Int),
  categoryId: Schema.optionalKey(IdInput),
  unit: Schema.optionalKey(Schema.String),
  type: Schema.optionalKey(Schema.Int),
  shippingWeight: Schema.optionalKey(Amount),
  description: Schema.optionalKey(Schema.String),
  content: Schema.optionalKey(Schema.String),
  tagIds: Schema.optionalKey(TagIds)
})
export type ProductAdd = typeof ProductAdd.Type

/** docs/api-catalogue.md §2.3: `product/edit` takes one object, `id` and the fields of add. */
export const ProductEdit = Schema.Struct({
  id: IdInput,
  name: Schema.optionalKey(Text),
  code: Schema.optionalKey(Schema.String),
  barcode: Schema.optionalKey(Schema.String),
  price: Schema.optionalKey(Amount),
  oldPrice: Schema.optionalKey(Amount),
  importPrice: Schema.optionalKey(Amount),
  wholesalePrice: Schema.optionalKey(Amount),
  status: Schema.optionalKey(Schema.Int),
  description: Schema.optionalKey(Schema.String)
})
export type ProductEdit = typeof ProductEdit.Type

const OrderProduct = Schema.Struct({ id: IdInput, price: Amount, quantity: Quantity })

/** docs/api-catalogue.md §3.4: `order/add`; `channel.appOrderId` is deduplicated per appId. */
export const OrderAdd = Schema.Struct({
  info: Schema.optionalKey(Schema.Struct({
    depotId: Schema.optionalKey(IdInput),
    /** docs/api-catalogue.md §3.2: only 54 new, 55 confirming, 57 awaiting confirmation or 56 confirmed. */
    status: Schema.optionalKey(Schema.Literals([54, 55, 56, 57])),
    description: Schema.optionalKey(Schema.String)
  })),
  channel: Schema.Struct({ appOrderId: Text }),
  shippingAddress: Schema.Struct({
    name: Text,
    mobile: Text,
    address: Schema.optionalKey(Schema.String),
    cityId: Schema.optionalKey(IdInput),
    districtId: Schema.optionalKey(IdInput),
    wardId: Schema.optionalKey(IdInput)
  }),
  carrier: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  products: Schema.Array(OrderProduct).check(Schema.isMinLength(1), Schema.isMaxLength(500)),
  payment: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  invoice: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
export type OrderAdd = typeof OrderAdd.Type

/** docs/api-catalogue.md §3.4: the statuses `order/edit` may set: confirmed, customer or system cancelled, success, returned. */
export const OrderEditStatus = Schema.Literals([56, 63, 64, 60, 72])

/**
 * docs/api-catalogue.md §3.4: orders already sent to a carrier (in transit 59, failed 61,
 * returning 71, return confirmed 74) or in success (60) or returned (72) cannot be edited at all.
 */
export const ORDER_NOT_EDITABLE: ReadonlySet<string> = new Set(["59", "60", "61", "71", "72", "74"])

/** docs/api-catalogue.md §3.4: `order/edit`: send only what changes (an empty value clears data). */
export const OrderEdit = Schema.Struct({
  info: Schema.Struct({
    id: IdInput,
    description: Schema.optionalKey(Schema.String),
    privateDescription: Schema.optionalKey(Schema.String),
    status: Schema.optionalKey(OrderEditStatus),
    tagIds: Schema.optionalKey(TagIds)
  }),
  shippingAddress: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  carrier: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  payment: Schema.optionalKey(Schema.Struct({
    transferAmount: Schema.optionalKey(Amount),
    transferAccountId: Schema.optionalKey(IdInput),
    code: Schema.optionalKey(Schema.String)
  }))
})
export type OrderEdit = typeof OrderEdit.Type

/** docs/api-catalogue.md §6: one customer of `customer/add`. */
export const CustomerAdd = Schema.Struct({
  name: Text,
  mobile: Text.check(Schema.isPattern(/^\+?[0-9]{8,15}$/)),
  type: Schema.optionalKey(Schema.Literals([1, 2, 3])),
  email: Schema.optionalKey(Schema.String),
  address: Schema.optionalKey(Schema.String),
  gender: Schema.optionalKey(Schema.Literals([1, 2])),
  birthday: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/)))
})
export type CustomerAdd = typeof CustomerAdd.Type

const BillProduct = Schema.Struct({
  id: IdInput,
  quantity: Quantity,
  price: Schema.optionalKey(Amount),
  discount: Schema.optionalKey(Schema.Struct({ type: Schema.Literals(["percent", "cash"]), value: Amount }))
})

/** docs/api-catalogue.md §5.4: `bill/addretail`. */
export const BillAddRetail = Schema.Struct({
  depotId: IdInput,
  customer: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  products: Schema.Array(BillProduct).check(Schema.isMinLength(1), Schema.isMaxLength(100)),
  saleId: Schema.optionalKey(IdInput),
  description: Schema.optionalKey(Schema.String),
  tagIds: Schema.optionalKey(TagIds),
  payment: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
export type BillAddRetail = typeof BillAddRetail.Type

const MovementProduct = Schema.Struct({ id: IdInput, quantity: Quantity, price: Schema.optionalKey(Amount) })
const movement = {
  depotId: IdInput,
  products: Schema.Array(MovementProduct).check(Schema.isMinLength(1), Schema.isMaxLength(100)),
  description: Schema.optionalKey(Schema.String),
  payment: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  tagIds: Schema.optionalKey(TagIds),
  debtDueDate: Schema.optionalKey(Schema.String)
}

/** docs/api-catalogue.md §5.4: `inventory/importsupplier` and `exportsupplier`. */
export const SupplierMovement = Schema.Struct({ ...movement, supplierId: IdInput })
export type SupplierMovement = typeof SupplierMovement.Type

/** docs/api-catalogue.md §5.4: `inventory/importother` and `exportother`. */
export const OtherMovement = Schema.Struct({ ...movement, customer: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)) })
export type OtherMovement = typeof OtherMovement.Type

// ---------------------------------------------------------------------------------------------
// Kinds
// ---------------------------------------------------------------------------------------------

/**
 * How an effect whose answer was lost is found again:
 * - `resend`: the service itself makes a second send harmless (order/add refuses a used
 *   appOrderId; edits set the same values again), so the engine sends again;
 * - `list`: a targeted read of a list operation, by a natural key of the payload (`key`:
 *   appProductId, mobile) or by the marker the engine wrote into `description`.
 */
export interface ListRead {
  readonly operation: Operation.Operation<unknown>
  /** The filters of the targeted read; `window`: from the request to now (ms), for time-windowed lists. */
  readonly filters: (payload: any, marker: string | undefined, window: { readonly fromMs: number; readonly toMs: number }) => Readonly<Record<string, unknown>>
  /** Whether a listed record is this command's effect. */
  readonly matches: (record: unknown, payload: any, marker: string | undefined) => boolean
  /** Where the key lives, said to a person reading the evidence. */
  readonly by: string
}

export type Identity =
  /** `find`: where the id of an effect a resend was refused as a duplicate of is read. */
  | { readonly _tag: "resend"; readonly find?: ListRead | undefined }
  | ({ readonly _tag: "list" } & ListRead)

/**
 * A kind whose write takes several entities in one call (product/add, customer/add: up to 100,
 * docs/api-catalogue.md "Write operations"): queued commands of one tenant are coalesced into
 * one call and the answer is split back by each item's key.
 */
export interface Batch<P> {
  /** Items per call at most. */
  readonly max: number
  /** The item's key in its payload (appProductId, mobile). */
  readonly key: (payload: P) => string
  /** The key an entry of the answer's data names (the same field, echoed). */
  readonly answerKey: (entry: unknown) => string | undefined
  /** The request body of several items (with their markers, for marked kinds). */
  readonly body: (payloads: ReadonlyArray<P>) => unknown
}

export interface CommandKind<P = unknown> {
  readonly kind: Catalogue.WriteKind
  readonly operation: Operation.Operation<unknown>
  readonly payload: Schema.Codec<P, any>
  /** Whether the engine writes a marker into the payload's `description` to find it again. */
  readonly marked: boolean
  /** The request body for one payload (with the marker for marked kinds). */
  readonly body: (payload: P, marker: string | undefined) => unknown
  /** The id of the created or changed entity, from the answer's data. */
  readonly entityId: (data: unknown, payload: P) => string | undefined
  readonly identity: Identity
  /** Set for kinds the engine coalesces into calls of several items. */
  readonly batch?: Batch<P> | undefined
  /**
   * Where the copy of the business (the read models, fed by webhooks and pulls) maps this
   * kind's natural key to the entity's id: looked up before any read of the service.
   */
  readonly copy?: { readonly entity: "product" | "order"; readonly key: (payload: P) => string } | undefined
  /**
   * Where a confirmed command's effect is read back when the copy has not shown it within the
   * bound: a list read naming the entity (`ids`, or the natural key), and whether a listed record
   * shows the effect with the fields the command set.
   */
  readonly verify: Verify<P>
}

export interface Verify<P> {
  /** The copy's entity the effect shows in (the read models' table of that resource). */
  readonly entity: "product" | "order" | "customer" | "bill"
  readonly operation: Operation.Operation<unknown>
  readonly filters: (payload: P, entityId: string) => Readonly<Record<string, unknown>>
  /** Whether a record (the service's list item, or the copy's record) is the effect, with the fields set. */
  readonly shows: (record: unknown, payload: P, entityId: string) => boolean
}

/** Whether `record` holds each of `fields` as the payload set it (text comparison: ids and amounts read back as either). */
const holds = (record: unknown, payload: object, fields: ReadonlyArray<readonly [string, string]>): boolean =>
  fields.every(([from, at]) => {
    const set = (payload as Record<string, unknown>)[from]
    return set === undefined || text(Records.valueAt(record, at)) === text(set)
  })
const isId = (record: unknown, entityId: string, idField = "id"): boolean => Records.recordId(record, idField) === entityId
/** The filter naming one entity by its id (digits; big ids stay exact on the wire). */
const byIds = (_payload: unknown, entityId: string) => ({ ids: [Ids.toWire(entityId)] })

/** The write operation of a kind, from its catalogue entry (docs/api-catalogue.md, "Write operations"). */
const command = (kind: Catalogue.WriteKind): Operation.Operation<unknown> => {
  const entry = Catalogue.write(kind)
  return Operation.make({ family: entry.family, resource: entry.resource, operation: entry.operation, kind: "command", permission: entry.permission }) as Operation.Operation<unknown>
}

const first = (data: unknown): unknown => (Array.isArray(data) ? data[0] : data)
const idAt = (value: unknown, path = "id"): string | undefined => Records.recordId(value, path)
const text = (value: unknown): string | undefined =>
  typeof value === "string" ? value : typeof value === "number" || typeof value === "bigint" ? String(value) : undefined
const withMarker = <P extends { readonly description?: string | undefined }>(payload: P, marker: string | undefined): P =>
  marker === undefined ? payload : { ...payload, description: payload.description === undefined || payload.description === "" ? marker : `${payload.description} ${marker}` }

/** docs/api-catalogue.md §5.1: bill/list answers 31 days at a time, by service calendar days. */
const serviceDay = (ms: number): string => new Date(ms + Operation.SERVICE_UTC_OFFSET_MS).toISOString().slice(0, 10)
const byMarker = (operation: Operation.Operation<unknown>): Identity => ({
  _tag: "list",
  operation,
  by: "the marker in description",
  filters: (payload: { readonly depotId: string | number }, _marker, window) => ({
    depotIds: [typeof payload.depotId === "string" ? Ids.toWire(payload.depotId) : payload.depotId],
    fromDate: serviceDay(window.fromMs - 86_400_000),
    toDate: serviceDay(window.toMs + 86_400_000)
  }),
  matches: (record, _payload, marker) => {
    const description = text(Records.valueAt(record, "description"))
    return marker !== undefined && description !== undefined && description.includes(marker)
  }
})

const billList = Operation.billList as Operation.Operation<unknown>
// bill/list answers bills and stock movements alike; `ids` lifts its 31-day window.
const billVerify: Verify<unknown> = {
  entity: "bill",
  operation: billList,
  filters: byIds,
  shows: (record, _payload, entityId) => isId(record, entityId)
}

const movementKind = (kind: Catalogue.WriteKind, payload: Schema.Codec<any, any>): CommandKind<any> => ({
  kind,
  operation: command(kind),
  payload,
  marked: true,
  body: (p, marker) => withMarker(p, marker),
  entityId: (data) => idAt(first(data)),
  identity: byMarker(billList),
  verify: billVerify
})

export const kinds = {
  "product.add": {
    kind: "product.add",
    operation: command("product.add"),
    payload: ProductAdd,
    marked: false,
    // docs/api-catalogue.md §2.3: the body is an array (of up to 100 products).
    body: (p: ProductAdd) => [p],
    entityId: (data: unknown, p: ProductAdd) =>
      idAt((Array.isArray(data) ? data : [data]).find((d) => text(Records.valueAt(d, "appProductId")) === p.appProductId) ?? first(data)),
    identity: {
      _tag: "list",
      operation: Operation.productList as Operation.Operation<unknown>,
      by: "appProductId",
      // product/list has no appProductId filter: `name` matches name, code or barcode.
      filters: (p: ProductAdd) => ({ name: p.name }),
      matches: (record: unknown, p: ProductAdd) => text(Records.valueAt(record, "appProductId")) === p.appProductId
    },
    batch: {
      max: 100,
      key: (p: ProductAdd) => p.appProductId,
      answerKey: (entry: unknown) => text(Records.valueAt(entry, "appProductId")),
      body: (ps: ReadonlyArray<ProductAdd>) => ps
    },
    copy: { entity: "product", key: (p: ProductAdd) => p.appProductId },
    verify: {
      entity: "product",
      operation: Operation.productList as Operation.Operation<unknown>,
      filters: byIds,
      shows: (r: unknown, p: ProductAdd, id: string) => isId(r, id) && holds(r, p, [["appProductId", "appProductId"], ["name", "name"]])
    }
  } satisfies CommandKind<ProductAdd>,
  "product.edit": {
    kind: "product.edit",
    operation: command("product.edit"),
    payload: ProductEdit,
    marked: false,
    body: (p: ProductEdit) => ({ ...p, id: typeof p.id === "string" ? Ids.toWire(p.id) : p.id }),
    entityId: (_data: unknown, p: ProductEdit) => String(p.id),
    identity: { _tag: "resend" },
    verify: {
      entity: "product",
      operation: Operation.productList as Operation.Operation<unknown>,
      filters: byIds,
      shows: (r: unknown, p: ProductEdit, id: string) => isId(r, id) && holds(r, p, [["name", "name"], ["code", "code"], ["barcode", "barcode"]])
    }
  } satisfies CommandKind<ProductEdit>,
  "order.add": {
    kind: "order.add",
    operation: command("order.add"),
    payload: OrderAdd,
    marked: false,
    body: (p: OrderAdd) => p,
    entityId: (data: unknown) => idAt(first(data)),
    // docs/api-catalogue.md §3.4: duplicates of channel.appOrderId are blocked per appId. order/list
    // cannot filter by appOrderId: the orders created since the request are read (one window).
    identity: {
      _tag: "resend",
      find: {
        operation: Operation.orderList as Operation.Operation<unknown>,
        by: "channel.appOrderId",
        filters: (_p: OrderAdd, _marker: string | undefined, window: { readonly fromMs: number; readonly toMs: number }) => ({
          createdAtFrom: Math.floor(window.fromMs / 1000) - 300,
          createdAtTo: Math.ceil(window.toMs / 1000) + 300
        }),
        matches: (record: unknown, p: OrderAdd) => text(Records.valueAt(record, "channel.appOrderId")) === p.channel.appOrderId
      }
    },
    copy: { entity: "order", key: (p: OrderAdd) => p.channel.appOrderId },
    verify: {
      entity: "order",
      operation: Operation.orderList as Operation.Operation<unknown>,
      filters: byIds,
      shows: (r: unknown, p: OrderAdd, id: string) =>
        isId(r, id, "info.id") && text(Records.valueAt(r, "channel.appOrderId")) === p.channel.appOrderId
    }
  } satisfies CommandKind<OrderAdd>,
  "order.edit": {
    kind: "order.edit",
    operation: command("order.edit"),
    payload: OrderEdit,
    marked: false,
    body: (p: OrderEdit) => p,
    entityId: (_data: unknown, p: OrderEdit) => String(p.info.id),
    identity: { _tag: "resend" },
    verify: {
      entity: "order",
      operation: Operation.orderList as Operation.Operation<unknown>,
      filters: byIds,
      shows: (r: unknown, p: OrderEdit, id: string) => isId(r, id, "info.id") && holds(r, p.info, [["status", "info.status"], ["description", "info.description"]])
    }
  } satisfies CommandKind<OrderEdit>,
  "customer.add": {
    kind: "customer.add",
    operation: command("customer.add"),
    payload: CustomerAdd,
    marked: false,
    // docs/api-catalogue.md §6: an array of up to 100 customers.
    body: (p: CustomerAdd) => [p],
    entityId: (data: unknown, p: CustomerAdd) =>
      idAt((Array.isArray(data) ? data : [data]).find((d) => text(Records.valueAt(d, "mobile")) === p.mobile) ?? first(data)),
    identity: {
      _tag: "list",
      operation: Operation.customerList as Operation.Operation<unknown>,
      by: "mobile",
      filters: (p: CustomerAdd) => ({ mobile: p.mobile }),
      matches: (record: unknown, p: CustomerAdd) => text(Records.valueAt(record, "mobile")) === p.mobile
    },
    batch: {
      max: 100,
      key: (p: CustomerAdd) => p.mobile,
      answerKey: (entry: unknown) => text(Records.valueAt(entry, "mobile")),
      body: (ps: ReadonlyArray<CustomerAdd>) => ps
    },
    verify: {
      entity: "customer",
      operation: Operation.customerList as Operation.Operation<unknown>,
      // customer/list has no ids filter: the mobile names the customer.
      filters: (p: CustomerAdd) => ({ mobile: p.mobile }),
      shows: (r: unknown, p: CustomerAdd, id: string) => isId(r, id) && text(Records.valueAt(r, "mobile")) === p.mobile
    }
  } satisfies CommandKind<CustomerAdd>,
  "bill.addRetail": {
    kind: "bill.addRetail",
    operation: command("bill.addRetail"),
    payload: BillAddRetail,
    marked: true,
    body: (p: BillAddRetail, marker: string | undefined) => withMarker(p, marker),
    entityId: (data: unknown) => idAt(first(data)),
    identity: byMarker(billList),
    verify: billVerify
  } satisfies CommandKind<BillAddRetail>,
  "inventory.importSupplier": movementKind("inventory.importSupplier", SupplierMovement),
  "inventory.exportSupplier": movementKind("inventory.exportSupplier", SupplierMovement),
  "inventory.importOther": movementKind("inventory.importOther", OtherMovement),
  "inventory.exportOther": movementKind("inventory.exportOther", OtherMovement)
} as const

export type KindName = keyof typeof kinds

/** The payload type of each kind (what `ctx.commands` and the admin API accept). */
export interface Payloads {
  readonly "product.add": ProductAdd
  readonly "product.edit": ProductEdit
  readonly "order.add": OrderAdd
  readonly "order.edit": OrderEdit
  readonly "customer.add": CustomerAdd
  readonly "bill.addRetail": BillAddRetail
  readonly "inventory.importSupplier": SupplierMovement
  readonly "inventory.exportSupplier": SupplierMovement
  readonly "inventory.importOther": OtherMovement
  readonly "inventory.exportOther": OtherMovement
}

export const names: ReadonlyArray<KindName> = Object.keys(kinds) as Array<KindName>

// Every write of the catalogue has its kind here, and no kind is without its write.
for (const w of Catalogue.writes) if (!Object.hasOwn(kinds, w.kind)) throw new Error(`CommandKind: no kind for the write ${w.kind}`)

export const isKindName = (name: string): name is KindName => Object.hasOwn(kinds, name)

/** The kind of a name, or undefined. */
export const find = (name: string): CommandKind<unknown> | undefined =>
  isKindName(name) ? kinds[name] as unknown as CommandKind<unknown> : undefined

/** One problem of a payload: where (`payload.products.0.quantity`) and what. */
export interface Issue {
  readonly path: string
  readonly message: string
}
