/**
 * The deterministic event mix the projection and replay benchmarks generate their logs with,
 * so their figures compare. Per block of 1000 events, shuffled: 350 product webhooks
 * (productAdd/productUpdate), 100 inventoryChange (3 products in 1 to 3 depots each, v3
 * shape), 150 orderAdd (nested v3 orders of 2 lines) and 4 product/list sync pages of 100
 * products (each product counted as one event); 10 businesses, 20,000 products, ids beyond
 * 2^53. Payloads have the shapes of docs/api-catalogue.md. Each generated record also carries the
 * payload it was built from, so a benchmark can derive its own baseline from it.
 */
import type { LogRecord } from "@ocs/event-log"
import { EngineRecord, Json } from "@ocs/protocol"

const APP = "1001"
const BUSINESSES = ["42", "43", "44", "45", "46", "9007199254740993001", "9007199254740993002", "9007199254740993003", "18446744073709551615", "7"]
const PRODUCTS = 20_000
const PRODUCT_BASE = 9007199254740993n
const T0 = Date.UTC(2024, 0, 1)
const PRODUCT_SYNC = EngineRecord.entityMeta({ kind: "product", idField: "id", updatedAtField: "updatedAt" })

/** mulberry32: deterministic runs. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

export interface MixProduct {
  readonly id: bigint
  readonly appProductId: string
  readonly code: string
  readonly barcode: string
  readonly name: string
  readonly prices: { readonly retail: number; readonly import: number }
  readonly categoryId: number
  /** Unix seconds, as the service sends them. */
  readonly updatedAt: number
  readonly vendorField: { readonly note: string }
}

/** An inventoryChange item (v3): the product as `id`, its stock per depot. */
export interface MixStock {
  readonly id: bigint
  readonly depots: ReadonlyArray<{ readonly id: number; readonly remain: number; readonly available: number }>
}

export interface MixOrderLine { readonly productId: bigint; readonly quantity: number; readonly price: number }

/** An order as order/list and orderAdd send it (v3, nested). */
export interface MixOrder {
  readonly info: { readonly id: bigint; readonly type: number; readonly status: number; readonly depotId: number; readonly createdAt: number; readonly updatedAt: number }
  readonly channel: { readonly appOrderId: string; readonly saleChannel: number }
  readonly shippingAddress: { readonly id: number; readonly name: string; readonly mobile: string }
  readonly products: ReadonlyArray<MixOrderLine>
  readonly carrier: { readonly id: number; readonly shipFee: number }
}

/** The payload a record was built from (a page's products are its `data`). */
export type MixPayload =
  | { readonly kind: "product"; readonly product: MixProduct }
  | { readonly kind: "inventory"; readonly items: ReadonlyArray<MixStock> }
  | { readonly kind: "order"; readonly order: MixOrder }
  | { readonly kind: "page"; readonly products: ReadonlyArray<MixProduct> }

export interface Generated {
  readonly record: LogRecord.NewRecord
  /** Events the record holds: 1, or 100 for a sync page. */
  readonly events: number
  /** Position of the record in its block. */
  readonly index: number
  readonly payload: MixPayload
}

export const MIX_APP_ID = APP

/** A fresh generator: every generator yields the same blocks in the same order. */
export const makeGenerator = () => {
  const random = prng(7)
  const pick = <A>(xs: ReadonlyArray<A>) => xs[Math.floor(random() * xs.length)]!
  let clock = T0
  let orderSeq = 0
  const product = (k: number, at: number): MixProduct => ({
    id: PRODUCT_BASE + BigInt(k),
    appProductId: `ap-${k}`,
    code: `SKU-${k}`,
    barcode: `893${String(k).padStart(10, "0")}`,
    name: `Sản phẩm ${k} (${Math.floor(random() * 1000)})`,
    prices: { retail: Math.round(random() * 100_000) * 100, import: 1000 },
    categoryId: 1 + (k % 50),
    updatedAt: Math.floor(at / 1000),
    vendorField: { note: "kept" }
  })
  const webhook = (businessId: string, event: string, data: unknown): LogRecord.NewRecord => ({
    appId: APP, businessId, source: "webhook", type: event, receivedAt: clock,
    body: Json.stringify({ event, businessId: BigInt(businessId), webhooksVerifyToken: "verify", data })
  })
  /** One block of 1000 events, shuffled. */
  const block = (): Array<Generated> => {
    const kinds: Array<"product" | "inventory" | "order" | "page"> = [
      ...Array<"product">(350).fill("product"), ...Array<"inventory">(100).fill("inventory"),
      ...Array<"order">(150).fill("order"), ...Array<"page">(4).fill("page")
    ]
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!]
    }
    return kinds.map((kind, index): Generated => {
      clock += 7
      const businessId = pick(BUSINESSES)
      switch (kind) {
        case "product": {
          const p = product(Math.floor(random() * PRODUCTS), clock)
          return { record: webhook(businessId, random() < 0.2 ? "productAdd" : "productUpdate", p), events: 1, index, payload: { kind, product: p } }
        }
        case "inventory": {
          const items: Array<MixStock> = [0, 1, 2].map(() => ({
            id: PRODUCT_BASE + BigInt(Math.floor(random() * PRODUCTS)),
            depots: Array.from({ length: 1 + Math.floor(random() * 3) }, (_, d) => ({ id: d + 1, remain: Math.floor(random() * 500), available: Math.floor(random() * 500) }))
          }))
          return { record: webhook(businessId, "inventoryChange", items), events: 1, index, payload: { kind, items } }
        }
        case "order": {
          const id = PRODUCT_BASE * 2n + BigInt(orderSeq++)
          const createdAt = Math.floor(clock / 1000)
          const o: MixOrder = {
            info: { id, type: 1, status: 54, depotId: 1 + (orderSeq % 5), createdAt, updatedAt: createdAt },
            channel: { appOrderId: `web-${orderSeq}`, saleChannel: 2 },
            shippingAddress: { id: orderSeq, name: "Trần Thị B", mobile: `09${String(orderSeq % 1e8).padStart(8, "0")}` },
            products: [{ productId: PRODUCT_BASE + 1n, quantity: 2, price: 150000 }, { productId: PRODUCT_BASE + 2n, quantity: 1, price: 99000 }],
            carrier: { id: 5, shipFee: 20000 }
          }
          return { record: webhook(businessId, "orderAdd", o), events: 1, index, payload: { kind, order: o } }
        }
        case "page": {
          const start = Math.floor(random() * (PRODUCTS - 100))
          const items = Array.from({ length: 100 }, (_, j) => product(start + j, clock - 60_000))
          return {
            record: { appId: APP, businessId, source: "sync", type: "product/list.page", receivedAt: clock, meta: PRODUCT_SYNC as unknown as LogRecord.Meta,
              body: Json.stringify({ code: 1, data: items, paginator: { next: `cursor-${clock}` } }) },
            events: 100,
            index,
            payload: { kind, products: items }
          }
        }
      }
    })
  }
  return { block }
}
