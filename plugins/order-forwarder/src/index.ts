/**
 * order-forwarder: every OrderAdded / OrderUpdated becomes an HMAC-SHA256-signed POST to a
 * configured URL.
 *
 * Request: `POST <url>`, JSON body `{ id, type, timestamp, appId, businessId, orderId, appOrderId,
 * summary, order }`: `order` exactly as received (nested v3 `info`/`channel`/`products`/..., large
 * ids digit for digit), `summary` the fields receivers usually route on, read once with
 * `Records.orderSummary` (status and sale channel codes, depot, customer, total, line count).
 * Headers:
 * - `x-ocs-signature: sha256=<hex HMAC-SHA256 of the exact body bytes with the shared secret>`
 * - `x-ocs-timestamp: <ms>` (also in the signed body, so it cannot be altered)
 * - `idempotency-key: <event id>` and `x-ocs-event-id` (the same on every retry and redelivery)
 * A non-2xx answer or a timeout fails the attempt: the runtime retries with backoff, then
 * dead-letters the event (re-drivable).
 */
import { definePlugin, Effect, Json, Records, Schema } from "@ocs/plugin-sdk"
import * as NodeCrypto from "node:crypto"

export const Config = Schema.Struct({
  /** Where orders are POSTed. */
  url: Schema.String.check(Schema.isMinLength(1)),
  /** Shared secret for the signature. */
  secret: Schema.String.check(Schema.isMinLength(8)),
  /** Per-request timeout (default 10 s). */
  timeoutMillis: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0)))
})
export type Config = typeof Config.Type

export const SIGNATURE_HEADER = "x-ocs-signature"
export const TIMESTAMP_HEADER = "x-ocs-timestamp"

/** `sha256=<hex>` of the body with the secret. */
export const sign = (secret: string, body: string): string =>
  `sha256=${NodeCrypto.createHmac("sha256", secret).update(body, "utf8").digest("hex")}`

/** Constant-time check of a signature header, for receivers. */
export const verify = (secret: string, body: string, header: string | undefined): boolean => {
  if (header === undefined) return false
  const expected = Buffer.from(sign(secret, body))
  const given = Buffer.from(header)
  return expected.length === given.length && NodeCrypto.timingSafeEqual(expected, given)
}

export default definePlugin({
  name: "order-forwarder",
  version: "0.1.0",
  sdkVersion: "0.x",
  subscribes: ["OrderAdded", "OrderUpdated"],
  config: Config,
  timeoutMillis: 30_000,
  retry: { maxAttempts: 6, baseDelayMillis: 250, maxDelayMillis: 30_000 },
  handle: (event, ctx) =>
    Effect.gen(function*() {
      const timestamp = Date.now()
      const s = Records.orderSummary(event.order)
      const body = Json.stringify({
        id: ctx.eventId,
        type: event._tag,
        timestamp,
        appId: event.appId,
        businessId: event.businessId,
        orderId: s.id ?? null,
        appOrderId: s.appOrderId ?? null,
        summary: {
          status: s.status ?? null,
          saleChannel: s.saleChannel ?? null,
          depotId: s.depotId ?? null,
          customerName: s.customerName ?? null,
          customerMobile: s.customerMobile ?? null,
          total: s.total,
          lineCount: s.lineCount
        },
        order: event.order
      })
      yield* ctx.http.request({
        url: ctx.config.url,
        method: "POST",
        body,
        timeoutMillis: ctx.config.timeoutMillis,
        headers: {
          "content-type": "application/json",
          [SIGNATURE_HEADER]: sign(ctx.config.secret, body),
          [TIMESTAMP_HEADER]: String(timestamp),
          "idempotency-key": ctx.eventId,
          "x-ocs-event-id": ctx.eventId
        }
      })
      yield* ctx.log.info("order forwarded", { orderId: s.id ?? "", attempt: ctx.attempt })
    })
})
