/**
 * What a webhook delivery carries: the envelope the API reference shows (event, businessId as a JSON
 * integer, webhooksVerifyToken, data), and the hostile bodies the `webhookMalformed` fault
 * sends instead, for testing a receiver against bad input.
 */
import * as Json from "@ocs/protocol/Json"
import type { FaultOf } from "./Faults.ts"

export type HostileVariant = FaultOf<"webhookMalformed">["variant"]

/** The envelope of one event (docs/api-catalogue.md, §10 Webhooks); `businessId` is absent for webhooksEnabled. */
export const envelope = (verifyToken: string, event: string, businessId: string | undefined, data: unknown): string =>
  Json.stringify({
    event,
    businessId: businessId === undefined ? undefined : BigInt(businessId),
    webhooksVerifyToken: verifyToken,
    data
  })

/** Bodies for hostile-input tests of a webhook receiver. */
export const hostileBody = (
  variant: HostileVariant,
  verifyToken: string,
  event: string,
  businessId: string,
  data: unknown
): string => {
  switch (variant) {
    case "nonJson":
      return `<html><body>${event} for ${businessId}</body></html>`
    case "wrongTypes":
      return Json.stringify({ event: [event], businessId: `b${businessId}`, webhooksVerifyToken: verifyToken, data: "data" })
    case "hugeNumbers":
      return `{"event":${JSON.stringify(event)},"businessId":1${"0".repeat(400)},"webhooksVerifyToken":${
        JSON.stringify(verifyToken)
      },"data":{"id":1e999,"price":-1e400,"quantity":123456789012345678901234567890.123456789}}`
    case "wrongVerifyToken":
      return Json.stringify({ event, businessId: BigInt(businessId), webhooksVerifyToken: `wrong-${verifyToken}`, data })
    case "missingFields":
      return Json.stringify({ data })
    case "huge":
      return Json.stringify({
        event,
        businessId: BigInt(businessId),
        webhooksVerifyToken: verifyToken,
        data: { padding: "x".repeat(4 * 1024 * 1024) }
      })
  }
}
