/**
 * low-stock-alert: when a product's stock (per depot) crosses below its threshold, store an
 * alert record in the plugin's key-value store and POST it to a configured webhook URL. Stock
 * comes from inventoryChange webhooks and product/inventory pulls, one level per product and
 * depot (docs/api-catalogue.md §2.2, §10).
 *
 * Only a crossing alerts: the last state per product and depot is kept (`level:<product>:<depot>`),
 * so further events below the threshold stay quiet until the stock rises to the threshold or
 * above and falls again. A product never seen before that arrives below its threshold alerts.
 * The POST goes out before the state is saved: a failure retries (and redelivery may repeat an
 * alert, with the same `idempotency-key`), never loses one.
 */
import { definePlugin, Effect, Option, Records, Schema } from "@ocs/plugin-sdk"

export const Config = Schema.Struct({
  /** Where alerts are POSTed (JSON). */
  webhookUrl: Schema.String.check(Schema.isMinLength(1)),
  /** Threshold for products without their own (alert when stock < threshold). */
  defaultThreshold: Schema.Finite,
  /** Per product id. */
  thresholds: Schema.optional(Schema.Record(Schema.String, Schema.Finite)),
  /**
   * Which stock figure to watch: "quantity" (default) is the stock on hand, the API's `remain`;
   * "available" is what can still be sold (on hand minus what orders hold). "remain" is accepted
   * as the API's own name for "quantity".
   */
  field: Schema.optional(Schema.Literals(["quantity", "remain", "available"]))
})
export type Config = typeof Config.Type

export interface Alert {
  readonly id: string
  readonly appId: string
  readonly businessId: string
  readonly productId: string
  readonly depotId: string
  readonly productName: string | null
  readonly quantity: number
  readonly threshold: number
  readonly eventId: string
  readonly receivedAt: number
}

interface Level {
  readonly below: boolean
  readonly quantity: number
}

/** The figure a level carries for the configured field (v3 names stock on hand `remain`). */
const figure = (level: Records.StockLevel, field: Config["field"]): number | undefined =>
  Records.toNumber(field === "available" ? level.available : level.remain)

export default definePlugin({
  name: "low-stock-alert",
  version: "0.1.0",
  sdkVersion: "0.x",
  subscribes: ["InventoryChanged", "InventoryObserved"],
  config: Config,
  retry: { maxAttempts: 5, baseDelayMillis: 500 },
  handle: (event, ctx) =>
    Effect.gen(function*() {
      // One level per product and depot the event names ("" for a product's totals).
      for (const level of event.items) {
        const { productId, depotId } = level
        const quantity = figure(level, ctx.config.field)
        if (quantity === undefined) continue
        const threshold = ctx.config.thresholds?.[productId] ?? ctx.config.defaultThreshold
        const stateKey = `level:${productId}:${depotId}`
        const previous = Option.getOrUndefined(yield* ctx.kv.get(stateKey)) as Level | undefined
        const below = quantity < threshold
        if (below && previous?.below !== true) {
          const product = yield* ctx.query.product(productId)
          const alert: Alert = {
            id: `${ctx.eventId}:${productId}:${depotId}`,
            appId: event.appId,
            businessId: event.businessId,
            productId,
            depotId,
            productName: Option.match(product, { onNone: () => null, onSome: (p) => p.name ?? null }),
            quantity,
            threshold,
            eventId: ctx.eventId,
            receivedAt: event.receivedAt
          }
          yield* ctx.http.postJson(ctx.config.webhookUrl, { type: "lowStock", alert }, { headers: { "idempotency-key": alert.id } })
          yield* ctx.kv.set(`alert:${alert.id}`, alert)
          yield* ctx.log.warn("low stock", { productId, depotId, quantity, threshold })
        }
        if (previous === undefined || previous.below !== below || previous.quantity !== quantity) {
          yield* ctx.kv.set(stateKey, { below, quantity } satisfies Level)
        }
      }
    })
})
