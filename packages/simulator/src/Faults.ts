/**
 * Faults on demand. A rule has a kind, a scope (appId, businessId, operation, event; absent
 * means any), and how often it fires: `count` times, and/or with `probability` drawn from a
 * stream seeded by the rule's `seed`, or else by the simulator seed and the rule id
 * (reproducible runs).
 *
 * API-side kinds act on calls to the service; webhook-side kinds act on deliveries.
 */
import { Result, Schema } from "effect"
import { canonicalId } from "./Auth.ts"
import { Id } from "./Id.ts"
import { fnv1a, stream } from "./internal/Random.ts"

const scope = {
  appId: Schema.optionalKey(Id),
  businessId: Schema.optionalKey(Id),
  /** "product/list"; for webhook kinds, ignored. */
  operation: Schema.optionalKey(Schema.String),
  /** Webhook event name; for API kinds, ignored. */
  event: Schema.optionalKey(Schema.String),
  count: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  probability: Schema.optionalKey(Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 }))),
  /** Seed of this rule's draws (default: the simulator's seed mixed with the rule id). */
  seed: Schema.optionalKey(Schema.Int)
}

const Ms = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 600_000 }))

/** Fault kinds and their parameters, as accepted by `POST /_sim/faults`. */
export const FaultSpecs = {
  /**
   * Delay the API response by `ms`: before the call is handled (default), or, for a write,
   * `after` its effect was applied (a slow answer to a write that took effect).
   */
  latency: Schema.Struct({
    kind: Schema.Literal("latency"),
    ms: Ms,
    phase: Schema.optionalKey(Schema.Literals(["before", "after"])),
    ...scope
  }),
  /** Answer with an HTTP 5xx (body: `body`, default a plain-text reason). */
  status: Schema.Struct({
    kind: Schema.Literal("status"),
    status: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 500, maximum: 599 }))),
    body: Schema.optionalKey(Schema.String),
    ...scope
  }),
  /** Destroy the connection without an answer, before the call is handled (nothing applied). */
  reset: Schema.Struct({ kind: Schema.Literal("reset"), ...scope }),
  /**
   * A write's answer lost after its effect was applied: the data changed (and its webhooks
   * left), then the connection is destroyed without a response.
   */
  lostAnswer: Schema.Struct({ kind: Schema.Literal("lostAnswer"), ...scope }),
  /**
   * A write answered as applied whose effect the caller never sees: the effect is applied under
   * its own id, but each `id` of the answer's data is replaced by one no record takes (from
   * 9000000000001 up), so a list by the answered id never shows it.
   */
  unlistedId: Schema.Struct({ kind: Schema.Literal("unlistedId"), ...scope }),
  /**
   * Answer ERR_429 and lock the key (appId + businessId + URL) as a call over budget does:
   * later calls during the lock are refused and extend it (docs/api-catalogue.md, Limits 2).
   */
  forced429: Schema.Struct({ kind: Schema.Literal("forced429"), ...scope }),
  /** Answer 200 with a hostile body. */
  malformed: Schema.Struct({
    kind: Schema.Literal("malformed"),
    variant: Schema.Literals(["nonJson", "truncated", "wrongTypes", "hugeNumbers", "empty", "deep"]),
    ...scope
  }),
  /** On ERR_429, report unlockedAt (and lockedSeconds) `seconds` earlier than the real lock end. */
  skewUnlockedAt: Schema.Struct({
    kind: Schema.Literal("skewUnlockedAt"),
    seconds: Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 3600 })),
    ...scope
  }),
  /** HTTP status for API failures (default 200), optionally only for one errorCode. */
  httpStatus: Schema.Struct({
    kind: Schema.Literal("httpStatus"),
    status: Schema.Int.check(Schema.isBetween({ minimum: 200, maximum: 599 })),
    errorCode: Schema.optionalKey(Schema.String),
    ...scope
  }),
  webhookDrop: Schema.Struct({ kind: Schema.Literal("webhookDrop"), ...scope }),
  webhookDuplicate: Schema.Struct({
    kind: Schema.Literal("webhookDuplicate"),
    copies: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10 }))),
    ...scope
  }),
  /** Hold the event back and deliver it after the next event of the same application. */
  webhookReorder: Schema.Struct({ kind: Schema.Literal("webhookReorder"), ...scope }),
  webhookDelay: Schema.Struct({ kind: Schema.Literal("webhookDelay"), ms: Ms, ...scope }),
  webhookMalformed: Schema.Struct({
    kind: Schema.Literal("webhookMalformed"),
    variant: Schema.Literals(["nonJson", "wrongTypes", "hugeNumbers", "wrongVerifyToken", "missingFields", "huge"]),
    ...scope
  })
} as const

export type FaultKind = keyof typeof FaultSpecs
export type FaultSpec = { [K in FaultKind]: typeof FaultSpecs[K]["Type"] }[FaultKind]
export type FaultOf<K extends FaultKind> = typeof FaultSpecs[K]["Type"]
/** A fault rule as a caller writes it (ids as strings, numbers or bigints). */
export type FaultInput = { [K in FaultKind]: typeof FaultSpecs[K]["Encoded"] }[FaultKind]
/** Where and how often a rule fires, common to every kind. */
export type Scope = Pick<FaultInput, keyof typeof scope>

export const faultKinds = Object.keys(FaultSpecs) as ReadonlyArray<FaultKind>

/** Decodes a fault rule, with a message naming the field at fault. */
export const decodeFault = (input: unknown): Result.Result<FaultSpec, string> => {
  const kind = typeof input === "object" && input !== null ? (input as { kind?: unknown }).kind : undefined
  if (typeof kind !== "string" || !(kind in FaultSpecs)) {
    return Result.fail(`kind: expected one of ${faultKinds.join(", ")}`)
  }
  const decoded = Schema.decodeUnknownResult(FaultSpecs[kind as FaultKind] as Schema.Codec<FaultSpec, unknown>)(input)
  return Result.mapError(decoded, (error) => error.message)
}

export interface FaultRule {
  readonly id: string
  readonly spec: FaultSpec
  readonly appId: string | undefined
  readonly businessId: string | undefined
  remaining: number | undefined
  fired: number
  readonly random: () => number
}

export interface FaultContext {
  readonly appId: string | null
  readonly businessId: string | null
  readonly operation?: string | undefined
  readonly event?: string | undefined
}

export class Faults {
  private rules: Array<FaultRule> = []
  private nextId = 1
  private readonly seed: number

  constructor(seed: number) {
    this.seed = seed
  }

  get empty(): boolean {
    return this.rules.length === 0
  }

  add(spec: FaultSpec): FaultRule {
    const id = `f${this.nextId++}`
    const rule: FaultRule = {
      id,
      spec,
      appId: spec.appId === undefined ? undefined : canonicalId(spec.appId) ?? String(spec.appId),
      businessId: spec.businessId === undefined ? undefined : canonicalId(spec.businessId) ?? String(spec.businessId),
      remaining: spec.count,
      fired: 0,
      random: stream(spec.seed ?? (this.seed ^ fnv1a(id)))
    }
    this.rules.push(rule)
    return rule
  }

  remove(id: string): boolean {
    const before = this.rules.length
    this.rules = this.rules.filter((r) => r.id !== id)
    return this.rules.length !== before
  }

  clear(): void {
    this.rules = []
  }

  /** Back to the start: no rules, and ids (which seed each rule's stream) counted from f1 again. */
  reset(): void {
    this.rules = []
    this.nextId = 1
  }

  list(): ReadonlyArray<FaultRule> {
    return this.rules
  }

  /**
   * The rules of `kind` that fire for this context (consuming their count). Probability is
   * drawn only for rules whose scope matches, so unrelated traffic does not shift the stream.
   */
  take<K extends FaultKind>(
    kind: K,
    context: FaultContext,
    extra?: (spec: FaultOf<K>) => boolean,
    max = Number.MAX_SAFE_INTEGER
  ): Array<FaultOf<K>> {
    const out: Array<FaultOf<K>> = []
    if (this.rules.length === 0) return out
    for (const rule of this.rules) {
      if (rule.spec.kind !== kind) continue
      const spec = rule.spec as FaultOf<K>
      if (rule.remaining !== undefined && rule.remaining <= 0) continue
      if (rule.appId !== undefined && rule.appId !== context.appId) continue
      if (rule.businessId !== undefined && rule.businessId !== context.businessId) continue
      if (spec.operation !== undefined && spec.operation !== context.operation) continue
      if (spec.event !== undefined && spec.event !== context.event) continue
      if (extra !== undefined && !extra(spec)) continue
      if (spec.probability !== undefined && rule.random() >= spec.probability) continue
      if (rule.remaining !== undefined) rule.remaining--
      rule.fired++
      out.push(spec)
      if (out.length >= max) break
    }
    return out
  }

  first<K extends FaultKind>(kind: K, context: FaultContext, extra?: (spec: FaultOf<K>) => boolean): FaultOf<K> | undefined {
    if (this.rules.length === 0) return undefined
    return this.take(kind, context, extra, 1)[0]
  }
}
