import { EventLog, type LogRecord, SqliteEventLog } from "@ocs/event-log"
import { DomainEvent, Json } from "@ocs/protocol"
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
  meta: DomainEvent.syncMeta({ kind, idField: options.idField ?? "id", updatedAtField: options.updatedAtField ?? "updatedAt" }) as unknown as LogRecord.Meta,
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
    const id = 9007199254740993n + BigInt(Math.floor(random() * 40))
    const updatedAt = random() < 0.8 ? new Date(t0 + Math.floor(random() * 1000) * 60_000).toISOString() : undefined
    const receivedAt = t0 + i * 1000
    const r = random()
    if (r < 0.3) out.push(webhook(biz, random() < 0.5 ? "productAdd" : "productUpdate", { id, name: `p${i}`, price: i / 4, updatedAt }, receivedAt))
    else if (r < 0.38) out.push(webhook(biz, "productDelete", { id }, receivedAt))
    else if (r < 0.5) out.push(webhook(biz, "inventoryChange", { products: [{ productId: id, depotId: 1, quantity: i }, { productId: id, depotId: 2, quantity: -i }] }, receivedAt))
    else if (r < 0.62) out.push(webhook(biz, "orderUpdate", { id, orderPrivateId: `o${i}`, status: i % 3, updatedAt, products: [{ id: 1 }] }, receivedAt))
    else if (r < 0.66) out.push(webhook(biz, "orderDelete", { id }, receivedAt))
    else if (r < 0.72) out.push(webhook(biz, "paymentReceived", { id: i % 7 === 0 ? undefined : id, amount: i }, receivedAt))
    else if (r < 0.86) {
      out.push(syncPage(biz, "product", Array.from({ length: 5 }, (_, j) => ({ id: id + BigInt(j), name: `s${i}-${j}`, updatedAt })), { receivedAt }))
    } else if (r < 0.93) out.push(syncPage(biz, "warrantySlip", [{ slipId: i % 9, note: `w${i}` }], { idField: "slipId", receivedAt }))
    else if (r < 0.96) out.push(webhook(null, "webhooksEnabled", { registeredEvents: { "101": "productAdd", [String(i)]: "x" } }, receivedAt))
    else out.push(webhook(biz, "brandNewEvent", { i }, receivedAt))
  }
  return out
}
