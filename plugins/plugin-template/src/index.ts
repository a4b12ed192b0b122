/**
 * plugin-template: copy this folder to start a plugin.
 *
 * It counts the orders of each customer (by mobile number) in its key-value store and, when a
 * customer reaches `milestone` orders, POSTs a note to `notifyUrl` (if configured). It shows the
 * parts a plugin usually needs: a config schema, typed events, the KV store, outbound HTTP and
 * the event id for idempotency.
 */
import { definePlugin, Effect, Option, Records, Schema } from "@ocs/plugin-sdk"

export const Config = Schema.Struct({
  milestone: Schema.Int.check(Schema.isGreaterThan(0)),
  notifyUrl: Schema.optional(Schema.String)
})

export default definePlugin({
  name: "plugin-template",
  version: "0.1.0",
  sdkVersion: "0.x",
  subscribes: ["OrderAdded"],
  config: Config,
  handle: (event, ctx) =>
    Effect.gen(function*() {
      // Orders arrive nested as the API sends them; orderSummary reads the customer's mobile from
      // `shippingAddress` (or the flat v2 field).
      const mobile = Records.orderSummary(event.order).customerMobile
      if (mobile === undefined) return
      // At-least-once delivery: remember which events were counted, so a redelivery is harmless.
      if (Option.isSome(yield* ctx.kv.get(`seen:${ctx.eventId}`))) return
      const key = `orders:${mobile}`
      const count = (Option.getOrUndefined(yield* ctx.kv.get(key)) as number | undefined ?? 0) + 1
      if (count === ctx.config.milestone && ctx.config.notifyUrl !== undefined) {
        yield* ctx.http.postJson(ctx.config.notifyUrl, { customerMobile: mobile, orders: count, eventId: ctx.eventId })
      }
      yield* ctx.kv.set(key, count)
      yield* ctx.kv.set(`seen:${ctx.eventId}`, true)
      yield* ctx.log.info("order counted", { mobile, count })
    })
})
