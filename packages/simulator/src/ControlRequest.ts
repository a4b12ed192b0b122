/**
 * What every control route needs from a request: decoding its JSON body with a schema, its
 * ids and query parameters, and looking up the entities it names. Any problem throws a
 * `ControlError`, which the router turns into HTTP 400/404/409 with `{ "error": "..." }`.
 */
import { Result, Schema } from "effect"
import { type App, type Business, canonicalId, type Token } from "./Auth.ts"
import { TokenRef } from "./ControlWire.ts"
import type { World } from "./World.ts"

export class ControlError {
  readonly status: number
  readonly message: string
  constructor(status: number, message: string) {
    this.status = status
    this.message = message
  }
}

export interface ControlRequest {
  readonly method: string
  readonly parts: ReadonlyArray<string>
  readonly query: URLSearchParams
  readonly body: unknown
}

/** Decodes a body (an absent body reads as `{}`); a mismatch answers 400 naming the field. */
export const decode = <S extends Schema.Codec<any, any>>(schema: S, input: unknown): S["Type"] => {
  const result = Schema.decodeUnknownResult(schema as Schema.Codec<S["Type"], unknown>)(input ?? {})
  if (Result.isFailure(result)) throw new ControlError(400, result.failure.message)
  return result.success
}

/** The canonical decimal form of an id, or 400 naming `what`. */
export const idOf = (raw: unknown, what: string): string => {
  const id = canonicalId(raw)
  if (id === undefined) throw new ControlError(400, `${what}: expected a positive integer id`)
  return id
}

/** Ids leave as bigints, so the JSON writer prints them as integers however large. */
export const big = (id: string): bigint => BigInt(id)

export const intParam = (q: URLSearchParams, name: string): number | undefined => {
  const v = q.get(name)
  if (v === null) return undefined
  const n = Number(v)
  if (!Number.isFinite(n)) throw new ControlError(400, `${name}: expected a number`)
  return n
}

export const strParam = (q: URLSearchParams, name: string): string | undefined => q.get(name) ?? undefined

export const findApp = (world: World, raw: string): App => {
  const found = world.registry.apps.get(idOf(raw, "appId"))
  if (found === undefined || found.removed) throw new ControlError(404, `no application ${raw}`)
  return found
}

export const findBusiness = (world: World, raw: unknown): Business => {
  const found = world.registry.businesses.get(idOf(raw, "businessId"))
  if (found === undefined) throw new ControlError(404, `no business ${String(raw)}`)
  return found
}

/** The token a `{ accessToken }` body names. */
export const findToken = (world: World, body: unknown): Token => {
  const t = world.registry.tokens.get(decode(TokenRef, body).accessToken)
  if (t === undefined) throw new ControlError(404, "no such access token")
  return t
}
