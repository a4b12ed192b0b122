/**
 * One domain event's rows, as statement parameters (./statements.ts binds them in this order).
 * Pure: the columns people query are read from the nested records (docs/api-catalogue.md) and
 * the record is kept whole beside them, lossless.
 */
import { type DomainEvent, Json, Records } from "@ocs/protocol"
import { asText, toMillis } from "../UpdatedAt.ts"
import type { Param, Plan, ProjectableRecord } from "./planTypes.ts"
import { Op } from "./statements.ts"

/** What every row takes from its event. */
interface EventFacts {
  readonly id: string
  readonly appId: string
  readonly businessId: string | null
  readonly source: string
  readonly receivedAt: number
}

// Decoded records hold bigints for big ids: serialise them the way made for parsed values.
const stringify = Json.stringifyParsed

/** A value as text: strings as-is, any other JSON value (a number code, a bigint) as its JSON text. */
const text = (value: unknown): string | null => asText(value, stringify)

/** A finite number, or null; a bigint is rounded here and kept exact by its `_text` column. */
const amount = (value: unknown): number | null => Records.toNumber(value) ?? null

/** An amount as sent, as text: a numeric string as-is, a number or bigint digit for digit. */
export const amountText = (value: unknown): string | null =>
  typeof value === "string" ? value : typeof value === "number" || typeof value === "bigint" ? stringify(value) : null

const id = (record: unknown, path: string): string | null => Records.recordId(record, path) ?? null

export const row = (plan: Plan, op: Op, params: ReadonlyArray<Param>): void => {
  plan.ops.push(op)
  plan.params.push(params)
}

/** The bookkeeping columns: which observation the row holds. */
const held = (event: EventFacts, record: ProjectableRecord, index: number): ReadonlyArray<Param> =>
  [event.id, record.offset, index, event.source, event.receivedAt]

export const unknown = (plan: Plan, record: ProjectableRecord, event: EventFacts, type: string, reason: string, data: unknown): void =>
  row(plan, Op.unknown, [
    event.appId, event.businessId ?? "", event.id, record.id, record.offset, event.source, type, reason,
    data === undefined ? null : stringify(data), event.receivedAt
  ])

/**
 * What a tombstone keeps of a deletion: the data of the delivery (the ids it names), never the
 * whole webhook body, which carries the verify token.
 */
const deletion = (data: unknown): unknown =>
  typeof data === "object" && data !== null && !Array.isArray(data) && "event" in data ? (data as Record<string, unknown>)["data"] ?? null : data

/** A tombstone's updatedAt: the delete's own, else when it was received (so a stale page cannot resurrect). */
const deletedAt = (event: EventFacts, updatedAt: unknown): number => toMillis(updatedAt) ?? event.receivedAt

// ---------------------------------------------------------------------------------------------

export const product = (plan: Plan, record: ProjectableRecord, event: DomainEvent.ProductAdded | DomainEvent.ProductUpdated | DomainEvent.ProductObserved, index: number): void => {
  const p = event.product
  const productId = Records.recordId(p)
  if (productId === undefined) return unknown(plan, record, event, record.type, `${event._tag}: product without id`, p)
  // product/list nests prices; older payloads send a flat price.
  const price = p.prices?.retail ?? p["price"]
  row(plan, Op.products, [
    event.appId, event.businessId, productId,
    text(p.appProductId), text(p.code), text(p.barcode), text(p.name), amount(price), amountText(price),
    id(p, "categoryId") ?? id(p, "category.id"), id(p, "brandId") ?? id(p, "brand.id"),
    stringify(p), text(p.updatedAt), toMillis(p.updatedAt), 0,
    ...held(event, record, index)
  ])
}

export const productDeleted = (plan: Plan, record: ProjectableRecord, event: DomainEvent.ProductDeleted, index: number): void => {
  if (event.productId === undefined) return unknown(plan, record, event, record.type, "ProductDeleted: without id", deletion(event.data))
  const updatedAt = Records.valueAt(event.data, "updatedAt")
  row(plan, Op.products, [
    event.appId, event.businessId, event.productId,
    null, null, null, null, null, null, null, null,
    stringify(deletion(event.data)), text(updatedAt), deletedAt(event, updatedAt), 1,
    ...held(event, record, index)
  ])
}

/** Stock levels: one row per product and depot. `index` leaves room for every level of one event. */
export const stock = (plan: Plan, record: ProjectableRecord, event: DomainEvent.InventoryChanged | DomainEvent.InventoryObserved, index: number): void => {
  const items = event.items
  for (let i = 0; i < items.length; i++) {
    const level = items[i]!
    row(plan, Op.inventory, [
      event.appId, event.businessId, level.productId, level.depotId,
      amount(level.remain), amountText(level.remain), amount(level.available), amountText(level.available),
      stringify(level.raw), text(level.updatedAt), toMillis(level.updatedAt), 0,
      ...held(event, record, index * 65536 + i)
    ])
  }
}

// ---------------------------------------------------------------------------------------------
// Orders and bills: a parent row, then its lines (kept only if the parent row took this version)
// ---------------------------------------------------------------------------------------------

/** An integer as sent, exactly (for sums beyond 2^53), or undefined. */
const exact = (value: unknown): bigint | undefined => {
  if (typeof value === "bigint") return value
  if (typeof value === "number") return Number.isSafeInteger(value) ? BigInt(value) : undefined
  if (typeof value === "string" && /^-?\d+$/.test(value.trim())) return BigInt(value.trim())
  return undefined
}

/** A line's total as `Records.orderSummary` counts it: totalAmount, else price x quantity - discount. */
const lineTotal = (l: Records.OrderLine): number =>
  Records.toNumber(l.totalAmount) ?? (Records.toNumber(l.price) ?? 0) * (Records.toNumber(l.quantity) ?? 0) - (Records.toNumber(l.discount) ?? 0)

/** The order total as text, digit for digit when every part is an integer (money is, in VND). */
const totalText = (lines: ReadonlyArray<Records.OrderLine>, total: number): string => {
  let sum = 0n
  for (const l of lines) {
    const t = l.totalAmount === null || l.totalAmount === undefined
      ? (() => {
        const [p, q, d] = [exact(l.price ?? 0), exact(l.quantity ?? 0), exact(l.discount ?? 0)]
        return p === undefined || q === undefined || d === undefined ? undefined : p * q - d
      })()
      : exact(l.totalAmount)
    if (t === undefined) return stringify(total)
    sum += t
  }
  return sum.toString()
}

export const order = (plan: Plan, record: ProjectableRecord, event: DomainEvent.OrderAdded | DomainEvent.OrderUpdated | DomainEvent.OrderObserved, index: number): void => {
  const o = event.order
  const s = Records.orderSummary(o)
  if (s.id === undefined) return unknown(plan, record, event, record.type, `${event._tag}: order without id`, o)
  const lines = o.products ?? []
  row(plan, Op.orders, [
    event.appId, event.businessId, s.id,
    s.appOrderId ?? null, s.type ?? null, s.status ?? null, s.saleChannel ?? null, s.depotId ?? null,
    s.customerId ?? null, s.customerName ?? null, s.customerMobile ?? null,
    s.total, totalText(lines, s.total), s.lineCount, text(s.createdAt), toMillis(s.createdAt),
    stringify(o), text(s.updatedAt), toMillis(s.updatedAt), 0,
    ...held(event, record, index)
  ])
  const parent = [event.appId, event.businessId, s.id, event.id]
  row(plan, Op.orderItemsClear, [event.appId, event.businessId, s.id, ...parent])
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!
    row(plan, Op.orderItem, [
      event.appId, event.businessId, s.id, i,
      // order/list names the product `productId`; the webhook payload names it `id`.
      id(l, "productId") ?? id(l, "id"), text(l.code), text(l.name),
      amount(l.quantity), amount(l.price), amount(l.discount), lineTotal(l), stringify(l),
      ...parent
    ])
  }
}

/** An order tombstone (orderDelete, or an order/deleted record): no content, no lines. */
export const orderDeleted = (plan: Plan, record: ProjectableRecord, event: EventFacts & { readonly businessId: string }, orderId: string, data: unknown, updatedAt: unknown, index: number): void => {
  row(plan, Op.orders, [
    event.appId, event.businessId, orderId,
    null, null, null, null, null, null, null, null, null, null, 0, null, null,
    stringify(data), text(updatedAt), deletedAt(event, updatedAt), 1,
    ...held(event, record, index)
  ])
  row(plan, Op.orderItemsClear, [event.appId, event.businessId, orderId, event.appId, event.businessId, orderId, event.id])
}

export const orderDeletedEvent = (plan: Plan, record: ProjectableRecord, event: DomainEvent.OrderDeleted, index: number): void => {
  if (event.orderId === undefined) return unknown(plan, record, event, record.type, "OrderDeleted: without id", deletion(event.data))
  orderDeleted(plan, record, event, event.orderId, deletion(event.data), Records.valueAt(event.data, "updatedAt"), index)
}

export const bill = (plan: Plan, record: ProjectableRecord, event: DomainEvent.BillObserved, index: number): void => {
  const b = event.bill
  const billId = Records.recordId(b)
  if (billId === undefined) return unknown(plan, record, event, record.type, "BillObserved: bill without id", b)
  // bill/list: `created.createdAt`; bill/retail: a top-level `createdAt`.
  const createdAt = b.created?.createdAt ?? b.createdAt
  const paid = b.payment?.amount
  row(plan, Op.bills, [
    event.appId, event.businessId, billId,
    id(b, "orderId"), id(b, "depotId"), text(b.date), text(b.type), text(b.mode),
    id(b, "customer.id"), text(b.customer?.name), text(b.customer?.mobile),
    amount(paid), amountText(paid), text(createdAt), toMillis(createdAt),
    stringify(b), 0,
    ...held(event, record, index)
  ])
  const parent = [event.appId, event.businessId, billId, event.id]
  row(plan, Op.billItemsClear, [event.appId, event.businessId, billId, ...parent])
  const lines = b.products ?? []
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!
    row(plan, Op.billItem, [
      event.appId, event.businessId, billId, i,
      id(l, "id") ?? id(l, "productId"), text(l.code), text(l.name),
      amount(l.quantity), amount(l.price), amount(l.discount), amount(l.amount), stringify(l),
      ...parent
    ])
  }
}

/** A bill tombstone (a bill/deleted record). Bills have no updated time: the log position decides. */
export const billDeleted = (plan: Plan, record: ProjectableRecord, event: EventFacts & { readonly businessId: string }, billId: string, data: unknown, index: number): void => {
  row(plan, Op.bills, [
    event.appId, event.businessId, billId,
    null, null, null, null, null, null, null, null, null, null, null, null,
    stringify(data), 1,
    ...held(event, record, index)
  ])
  row(plan, Op.billItemsClear, [event.appId, event.businessId, billId, event.appId, event.businessId, billId, event.id])
}

// ---------------------------------------------------------------------------------------------
// Reference data
// ---------------------------------------------------------------------------------------------

/** A reference's name, else its id (`level`, `group` of a customer). */
const refName = (record: unknown, path: string): string | null => text(Records.valueAt(record, `${path}.name`)) ?? id(record, `${path}.id`)

export const customer = (plan: Plan, record: ProjectableRecord, event: DomainEvent.CustomerObserved, index: number): void => {
  const c = event.customer
  const customerId = Records.recordId(c)
  if (customerId === undefined) return unknown(plan, record, event, record.type, "CustomerObserved: customer without id", c)
  row(plan, Op.customers, [
    event.appId, event.businessId, customerId,
    text(c.type), text(c.code), text(c.name), text(c.mobile), text(c.email),
    amount(c.points), amount(c.totalAmount), amountText(c.totalAmount), refName(c, "level"), refName(c, "group"),
    stringify(c), text(c.updatedAt), toMillis(c.updatedAt), 0,
    ...held(event, record, index)
  ])
}

export const depot = (plan: Plan, record: ProjectableRecord, event: DomainEvent.DepotObserved, index: number): void => {
  const d = event.depot
  const depotId = Records.recordId(d)
  if (depotId === undefined) return unknown(plan, record, event, record.type, "DepotObserved: depot without id", d)
  row(plan, Op.depots, [
    event.appId, event.businessId, depotId,
    text(d.code), text(d.name), text(d.mobile),
    // `locationV2` (2-level address, added 2026-05-30) when the 3-level one has none.
    text(d.location?.address) ?? text(Records.valueAt(d, "locationV2.address")),
    stringify(d), 0,
    ...held(event, record, index)
  ])
}

export const category = (plan: Plan, record: ProjectableRecord, event: DomainEvent.CategoryObserved | DomainEvent.BrandObserved, index: number): void => {
  const c = event._tag === "CategoryObserved" ? event.category : event.brand
  const what = event._tag === "CategoryObserved" ? "category" : "brand"
  const entityId = Records.recordId(c)
  if (entityId === undefined) return unknown(plan, record, event, record.type, `${event._tag}: ${what} without id`, c)
  row(plan, event._tag === "CategoryObserved" ? Op.categories : Op.brands, [
    event.appId, event.businessId, entityId,
    id(c, "parentId"), text(c.code), text(c.name), text(c.status), stringify(c), 0,
    ...held(event, record, index)
  ])
}

/**
 * Tombstones of entities a complete full pass no longer found (docs/architecture.md §4.14):
 * content columns null, `record` says why. Customers carry an updated time: the tombstone's is
 * when the deletion was found, so an older page cannot bring the entity back.
 */
export const referenceDeleted = (
  plan: Plan,
  record: ProjectableRecord,
  event: DomainEvent.CustomerDeleted | DomainEvent.BillDeleted | DomainEvent.DepotDeleted | DomainEvent.CategoryDeleted | DomainEvent.BrandDeleted | DomainEvent.InventoryDeleted,
  index: number
): void => {
  const data = stringify(event.data as Json.JsonValue)
  const facts = held(event, record, index)
  switch (event._tag) {
    case "CustomerDeleted":
      return row(plan, Op.customers, [
        event.appId, event.businessId, event.customerId,
        null, null, null, null, null, null, null, null, null, null,
        data, null, event.receivedAt, 1, ...facts
      ])
    case "BillDeleted":
      return billDeleted(plan, record, event, event.billId, event.data, index)
    case "DepotDeleted":
      return row(plan, Op.depots, [event.appId, event.businessId, event.depotId, null, null, null, null, data, 1, ...facts])
    case "CategoryDeleted":
    case "BrandDeleted":
      return row(plan, event._tag === "CategoryDeleted" ? Op.categories : Op.brands, [
        event.appId, event.businessId, event._tag === "CategoryDeleted" ? event.categoryId : event.brandId,
        null, null, null, null, data, 1, ...facts
      ])
    case "InventoryDeleted":
      return row(plan, Op.inventoryDeleted, [data, ...facts, event.appId, event.businessId, event.productId, record.offset, index])
  }
}

// ---------------------------------------------------------------------------------------------
// Payments, documents, application-level facts
// ---------------------------------------------------------------------------------------------

export const payment = (plan: Plan, record: ProjectableRecord, event: DomainEvent.PaymentReceived | DomainEvent.PaymentObserved, index: number): void => {
  const p = event.payment
  // A payment is a fact even without an id: key it by its (stable) domain event id.
  const paymentId = Records.recordId(p) ?? `event:${event.id}`
  row(plan, Op.payments, [
    event.appId, event.businessId, paymentId,
    id(p, "orderId"), id(p, "invoiceId"), amount(p.amount), amountText(p.amount), text(p.method),
    stringify(p), text(p.updatedAt), toMillis(p.updatedAt),
    ...held(event, record, index)
  ])
}

/** Kinds of documents that are deletions of a typed entity (docs/api-catalogue.md §3.3, §5.3). */
const deletionKinds: Readonly<Record<string, "order" | "bill">> = { "order.deleted": "order", "bill.deleted": "bill" }

export const document = (plan: Plan, record: ProjectableRecord, event: DomainEvent.DocumentObserved, index: number): void => {
  row(plan, Op.documents, [
    event.appId, event.businessId, event.kind, event.documentId ?? `event:${event.id}`,
    stringify(event.document), text(event.updatedAt), toMillis(event.updatedAt),
    ...held(event, record, index)
  ])
  // order/deleted and bill/deleted list deleted ids with the deletion time (`createdAt`): the
  // entity gets its tombstone too, so a full pull catches deletions a lost webhook missed.
  const deleted = deletionKinds[event.kind]
  if (deleted === undefined || event.documentId === undefined) return
  if (deleted === "order") orderDeleted(plan, record, event, event.documentId, event.document, event.document["createdAt"], index)
  else billDeleted(plan, record, event, event.documentId, event.document, index)
}

export const webhooksEnabled = (plan: Plan, record: ProjectableRecord, event: DomainEvent.WebhooksEnabled, index: number): void =>
  row(plan, Op.webhooks, [event.appId, "", stringify(event.registeredEvents), ...held(event, record, index)])
