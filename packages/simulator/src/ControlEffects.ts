/**
 * Control routes that count what the write operations applied (Effects.ts), so that a test
 * proves "exactly once": orders by appOrderId, products by appProductId, customers by mobile,
 * bills and stock movements by a marker in their description.
 */
import * as Catalogue from "@ocs/protocol/Catalogue"
import { Schema } from "effect"
import { ControlError, decode, findBusiness, strParam } from "./ControlRequest.ts"
import { route, type Route } from "./ControlRouter.ts"

const kinds = Catalogue.writes.map((w) => w.kind)

const kindOf = (raw: string | undefined): Catalogue.WriteKind | undefined => {
  if (raw === undefined) return undefined
  if (!(kinds as ReadonlyArray<string>).includes(raw)) throw new ControlError(400, `kind: expected one of ${kinds.join(", ")}`)
  return raw as Catalogue.WriteKind
}

export const EffectCount = Schema.Struct({
  kind: Schema.Literals(kinds),
  /** Exact keys (appOrderId, appProductId, mobile, or a whole description). */
  keys: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Markers found anywhere in the key (a description holding a marker). */
  markers: Schema.optionalKey(Schema.Array(Schema.String))
})
export type EffectCountInput = typeof EffectCount.Encoded

export const effects: ReadonlyArray<Route> = [
  route("GET", "/_sim/businesses/:businessId/effects", (world, req, [bid]) => {
    const b = findBusiness(world, bid)
    const kind = kindOf(strParam(req.query, "kind"))
    return { effects: b.data.effects.list(kind).map((e) => ({ kind: e.kind, key: e.key, id: e.id, atMs: e.atMs, answer: e.answer })) }
  }),
  route("POST", "/_sim/businesses/:businessId/effects/count", (world, req, [bid]) => {
    const b = findBusiness(world, bid)
    const input = decode(EffectCount, req.body)
    const ledger = b.data.effects
    return {
      kind: input.kind,
      total: ledger.list(input.kind).length,
      keys: ledger.countKeys(input.kind, input.keys ?? []),
      markers: ledger.countMarkers(input.kind, input.markers ?? []),
      duplicates: ledger.duplicates(input.kind),
      lost: ledger.lost(input.kind).map((e) => ({ key: e.key, id: e.id }))
    }
  })
]
