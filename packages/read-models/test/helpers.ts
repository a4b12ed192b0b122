import { EventLog, type LogRecord, SqliteEventLog } from "@ocs/event-log"
import { EngineRecord, Json } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { Effect, Layer, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

export const APP = "1001"
/** Beyond 2^53: must stay exact everywhere. */
export const BIZ = "9007199254740993001"
export const OTHER_BIZ = "42"
export const tenant = { appId: APP, businessId: BIZ }
export const otherTenant = { appId: APP, businessId: OTHER_BIZ }

export const tempDir = (prefix = "read-models-"): string => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), prefix))

export interface Files {
  readonly dir: string
  readonly log: string
  readonly rm: string
}

export const files = (): Files => {
  const dir = tempDir()
  return { dir, log: NodePath.join(dir, "log.db"), rm: NodePath.join(dir, "read-models.db") }
}

export const layer = (f: Files, options: Partial<ReadModels.Options> = {}) =>
  Layer.mergeAll(SqliteEventLog.layer({ filename: f.log, synchronous: "NORMAL", pollIntervalMillis: 50 }), ReadModels.ReadModels.layer({ filename: f.rm, ...options }))

export const webhook = (businessId: string | null, event: string, data: unknown, receivedAt?: number): LogRecord.NewRecord => ({
  appId: APP,
  businessId,
  source: "webhook",
  type: event,
  ...(receivedAt === undefined ? {} : { receivedAt }),
  body: Json.stringify({ event, ...(businessId === null ? {} : { businessId: BigInt(businessId) }), webhooksVerifyToken: "verify", data })
})

export const syncPage = (
  businessId: string,
  kind: string,
  items: ReadonlyArray<unknown>,
  options: { readonly idField?: string; readonly updatedAtField?: string; readonly receivedAt?: number } = {}
): LogRecord.NewRecord => ({
  appId: APP,
  businessId,
  source: "sync",
  type: `${kind}/list.page`,
  ...(options.receivedAt === undefined ? {} : { receivedAt: options.receivedAt }),
  meta: EngineRecord.entityMeta({ kind, idField: options.idField ?? "id", updatedAtField: options.updatedAtField ?? "updatedAt" }) as unknown as LogRecord.Meta,
  body: Json.stringify({ code: 1, data: items, paginator: { next: null } })
})

export const append = (records: ReadonlyArray<LogRecord.NewRecord>) =>
  Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    return yield* log.append(records)
  })

export const readLog = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  return yield* Stream.runCollect(log.read({ tenant: "all" }))
})

/** Appends then projects everything new (catchUp). */
export const appendAndProject = (records: ReadonlyArray<LogRecord.NewRecord>) =>
  Effect.gen(function*() {
    yield* append(records)
    const rm = yield* ReadModels.ReadModels
    return yield* rm.catchUp()
  })

/** Unix seconds of an ISO time, as the service sends times. */
export const seconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000)

/** An order as order/list and the v3 order webhooks nest it (docs/api-catalogue.md §3.1). */
export const order = (id: bigint | number, o: {
  readonly status?: number
  readonly saleChannel?: number
  readonly depotId?: number
  readonly appOrderId?: string
  readonly customer?: { readonly id?: number; readonly name?: string; readonly mobile?: string }
  readonly createdAt?: number | undefined
  readonly updatedAt?: number | string | undefined
  readonly lines?: ReadonlyArray<{ readonly productId: bigint | number; readonly quantity: number; readonly price: number; readonly discount?: number }>
  readonly type?: number
} = {}) => ({
  info: { id, type: o.type ?? 1, status: o.status ?? 54, depotId: o.depotId, createdAt: o.createdAt, updatedAt: o.updatedAt },
  channel: { appOrderId: o.appOrderId, saleChannel: o.saleChannel ?? 1 },
  shippingAddress: o.customer === undefined ? undefined : { id: o.customer.id, name: o.customer.name, mobile: o.customer.mobile },
  products: (o.lines ?? []).map((l) => ({ productId: l.productId, code: `SKU-${l.productId}`, name: `Product ${l.productId}`, quantity: l.quantity, price: l.price, discount: l.discount ?? 0 })),
  carrier: { id: 5, name: "GHN", shipFee: 20000 },
  payment: { codAmount: 0 }
})

/** A bill/list record (docs/api-catalogue.md §5.1). */
export const bill = (id: number, b: {
  readonly date?: string
  readonly type?: number
  readonly mode?: number
  readonly depotId?: number
  readonly orderId?: number
  readonly customer?: { readonly id: number; readonly name?: string; readonly mobile?: string }
  readonly amount?: number
  readonly lines?: ReadonlyArray<{ readonly id: number; readonly quantity: number; readonly price: number }>
} = {}) => ({
  id, orderId: b.orderId, depotId: b.depotId ?? 1, date: b.date ?? "2024-05-01", type: b.type ?? 2, mode: b.mode ?? 2,
  customer: b.customer, created: { id: 3, name: "Thu ngân", createdAt: seconds(`${b.date ?? "2024-05-01"}T03:00:00Z`) },
  products: (b.lines ?? []).map((l) => ({ imexId: l.id * 10, id: l.id, code: `SKU-${l.id}`, name: `Product ${l.id}`, quantity: l.quantity, price: l.price, amount: l.quantity * l.price })),
  payment: { amount: b.amount ?? 0 }
})

/** A product/inventory item (or an inventoryChange item): stock per depot. */
export const stockItem = (productId: bigint | number, depots: ReadonlyArray<readonly [number, number, number?]>, key: "productId" | "id" = "productId") => ({
  [key]: productId,
  remain: depots.reduce((n, [, r]) => n + r, 0),
  depots: depots.map(([id, remain, available]) => ({ id, remain, available: available ?? remain, shipping: 0 }))
})

/** A deterministic mix of every kind of fact over two businesses (ids repeat, so rows conflict). */
export const mixedRecords = (n: number, seed = 1): Array<LogRecord.NewRecord> => {
  let s = seed
  const random = () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  }
  const out: Array<LogRecord.NewRecord> = []
  const t0 = Date.UTC(2024, 0, 1)
  for (let i = 0; i < n; i++) {
    const biz = random() < 0.5 ? BIZ : OTHER_BIZ
    const k = Math.floor(random() * 40)
    const id = 9007199254740993n + BigInt(k)
    // Unix seconds, as the service sends them; some records carry none.
    const updatedAt = random() < 0.8 ? Math.floor((t0 + Math.floor(random() * 1000) * 60_000) / 1000) : undefined
    const receivedAt = t0 + i * 1000
    const r = random()
    if (r < 0.22) {
      out.push(webhook(biz, random() < 0.5 ? "productAdd" : "productUpdate", { id, name: `p${i}`, prices: { retail: i / 4 }, category: { id: k % 5 + 1 }, updatedAt }, receivedAt))
    } else if (r < 0.27) out.push(webhook(biz, "productDelete", [id, id + 1n], receivedAt))
    else if (r < 0.35) out.push(webhook(biz, "inventoryChange", [stockItem(id, [[1, i], [2, -i]], "id"), stockItem(id + 1n, [[1, i % 7]], "id")], receivedAt))
    else if (r < 0.4) out.push(syncPage(biz, "inventory", [stockItem(id, [[1, i % 11, i % 5]])], { idField: "productId", receivedAt }))
    else if (r < 0.5) {
      const lines = Array.from({ length: i % 4 }, (_, j) => ({ productId: id + BigInt(j), quantity: j + 1, price: 1000 * (i % 9) }))
      out.push(webhook(biz, random() < 0.5 ? "orderAdd" : "orderUpdate", order(k, { status: 54 + (i % 7), appOrderId: `o${i}`, createdAt: updatedAt, updatedAt, lines, customer: { id: k, mobile: `09${k}` } }), receivedAt))
    } else if (r < 0.53) out.push(webhook(biz, "orderDelete", [k], receivedAt))
    else if (r < 0.58) out.push(syncPage(biz, "order", [order(k, { status: 60, updatedAt, lines: [{ productId: id, quantity: 1, price: i }] })], { idField: "info.id", updatedAtField: "info.updatedAt", receivedAt }))
    else if (r < 0.63) out.push(syncPage(biz, "bill", [bill(k % 9 + 1, { lines: Array.from({ length: i % 3 }, (_, j) => ({ id: j + 1, quantity: i, price: 5 })), amount: i })], { receivedAt }))
    else if (r < 0.67) out.push(syncPage(biz, "customer", [{ id: k % 6 + 1, name: `c${i}`, mobile: `09${k % 6}`, points: i, updatedAt }], { receivedAt }))
    else if (r < 0.7) out.push(syncPage(biz, "depot", [{ id: k % 3 + 1, name: `d${i}`, location: { address: `a${i}` } }], { receivedAt }))
    else if (r < 0.72) out.push(syncPage(biz, "category", [{ id: k % 4 + 1, parentId: k % 2, name: `cat${i}`, status: 1 }], { receivedAt }))
    else if (r < 0.74) out.push(syncPage(biz, "brand", [{ id: k % 4 + 1, name: `b${i}`, status: 1 + (i % 2) }], { receivedAt }))
    else if (r < 0.78) out.push(webhook(biz, "paymentReceived", { id: i % 7 === 0 ? undefined : id, amount: i }, receivedAt))
    else if (r < 0.88) {
      out.push(syncPage(biz, "product", Array.from({ length: 5 }, (_, j) => ({ id: id + BigInt(j), name: `s${i}-${j}`, prices: { retail: j }, updatedAt })), { receivedAt }))
    } else if (r < 0.93) out.push(syncPage(biz, "warrantySlip", [{ slipId: i % 9, note: `w${i}` }], { idField: "slipId", receivedAt }))
    else if (r < 0.96) out.push(webhook(null, "webhooksEnabled", { registeredEvents: { "101": "productAdd", [String(i)]: "x" } }, receivedAt))
    else if (r < 0.97) out.push(webhook(biz, "appUninstalled", undefined, receivedAt))
    else out.push(webhook(biz, "brandNewEvent", { i }, receivedAt))
  }
  return out
}
