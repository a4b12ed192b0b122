/**
 * auto-restock: a plugin that acts (docs/architecture.md §4.31). When a product's stock in a
 * watched depot falls below its reorder point, it asks for a supplier import
 * (`inventory.importSupplier`) of the configured quantity, through the write path: the command
 * is keyed by the event and the product and depot, so a redelivered event is the same command
 * and the service receives one import. Only a crossing orders: the state per product and depot
 * (`below:<product>:<depot>`) is saved after the command's outcome, and rising to the reorder
 * point or above re-arms it.
 */
import { definePlugin, Effect, Option, Records, Schema } from "@ocs/plugin-sdk"

const Id = Schema.String.check(Schema.isPattern(/^[1-9][0-9]*$/))

export const Config = Schema.Struct({
  /** The supplier the goods are bought from. */
  supplierId: Id,
  /** Depots watched (ids); others are ignored. */
  depotIds: Schema.Array(Id).check(Schema.isMinLength(1)),
  /** Order when stock on hand (the API's `remain`) < reorderPoint. */
  reorderPoint: Schema.Finite,
  /** Units bought per crossing. */
  quantity: Schema.Finite.check(Schema.isGreaterThan(0)),
  /** Per product id: its own reorder point and quantity. */
  products: Schema.optional(Schema.Record(Schema.String, Schema.Struct({ reorderPoint: Schema.Finite, quantity: Schema.Finite.check(Schema.isGreaterThan(0)) })))
})
export type Config = typeof Config.Type

export default definePlugin({
  name: "auto-restock",
  version: "0.1.0",
  sdkVersion: "0.x",
  subscribes: ["InventoryChanged"],
  config: Config,
  retry: { maxAttempts: 5, baseDelayMillis: 500 },
  handle: (event, ctx) =>
    Effect.gen(function*() {
      for (const level of event.items) {
        const { productId, depotId } = level
        if (!ctx.config.depotIds.includes(depotId)) continue
        const remain = Records.toNumber(level.remain)
        if (remain === undefined) continue
        const rule = ctx.config.products?.[productId] ?? ctx.config
        const stateKey = `below:${productId}:${depotId}`
        const wasBelow = Option.getOrUndefined(yield* ctx.kv.get(stateKey)) === true
        const below = remain < rule.reorderPoint
        if (below && !wasBelow) {
          // Keyed by this event, product and depot: a redelivery answers the same command.
          const outcome = yield* ctx.commands.send("inventory.importSupplier", {
            depotId,
            supplierId: ctx.config.supplierId,
            products: [{ id: productId, quantity: rule.quantity }],
            description: `auto-restock: ${productId} at ${remain} < ${rule.reorderPoint}`
          }, { key: `restock:${productId}:${depotId}` })
          yield* ctx.log.info("restock asked", { productId, depotId, remain, command: outcome.id, state: outcome.state })
        }
        if (below !== wasBelow) yield* ctx.kv.set(stateKey, below)
      }
    })
})
