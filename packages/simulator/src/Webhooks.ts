/**
 * The webhook sender (spec: Events). Per application: a callback URL, a verify token and the
 * chosen events. Enabling sends `webhooksEnabled` and succeeds only on an HTTP 200. Data
 * changes are delivered to every application that chose the event and holds a valid token
 * for the business (spec: Delivery rule 5), one delivery at a time per application, in order.
 *
 * A delivery fails on any status other than 200 (redirects are not followed: spec: Delivery
 * rule 8), on a connection error, or when the answer is slower than `timeoutMs`; it is
 * repeated at most `maxRetries` (3) times. The success rate over the last `window` attempts
 * drives a ladder of actions (spec: Delivery rule 4): each time it falls below `below`, the
 * next step runs: re-send webhooksEnabled, then switch webhooks off, then lock the app.
 */
import * as Http from "node:http"
import * as Https from "node:https"
import * as Json from "@ocs/protocol/Json"
import type { Registry } from "./Auth.ts"
import type { Faults } from "./Faults.ts"
import { isLoopbackHost } from "./internal/Http.ts"

/** Event ids (spec: webhooksEnabled data). 101, 102, 110 and 202 are the spec's; the rest are ours. */
export const EVENT_IDS = {
  productAdd: 101,
  productUpdate: 102,
  productDelete: 103,
  inventoryChange: 110,
  orderAdd: 201,
  orderUpdate: 202,
  orderDelete: 203,
  paymentReceived: 301
} as const

export type EventName = keyof typeof EVENT_IDS
export const eventNames = Object.keys(EVENT_IDS) as ReadonlyArray<EventName>

export type DegradationStep = "recheck" | "disable" | "lock"

export interface WebhookOptions {
  readonly timeoutMs: number
  readonly maxRetries: number
  /** Delay before retry n (the last value repeats). */
  readonly retryDelaysMs: ReadonlyArray<number>
  /** The spec requires https; loopback tests use http, so this is off by default. */
  readonly requireHttps: boolean
  readonly degradation: {
    readonly window: number
    readonly minSamples: number
    readonly below: number
    readonly ladder: ReadonlyArray<DegradationStep>
  }
  /** How long a reordered event waits for a successor before it is sent anyway. */
  readonly reorderHoldMs: number
}

export const defaultWebhookOptions: WebhookOptions = {
  timeoutMs: 5_000,
  maxRetries: 3,
  retryDelaysMs: [1_000, 5_000, 15_000],
  requireHttps: false,
  degradation: { window: 20, minSamples: 10, below: 0.5, ladder: ["recheck", "disable", "lock"] },
  reorderHoldMs: 2_000
}

export interface Subscription {
  readonly appId: string
  status: "enabled" | "off"
  callbackUrl: string
  verifyToken: string
  events: ReadonlyArray<EventName>
  /** Why webhooks are off, when the sender switched them off. */
  offReason: string | undefined
  samples: Array<boolean>
  strikes: number
  attempts: number
  successes: number
  readonly queue: Array<Delivery>
  held: Delivery | undefined
  heldTimer: ReturnType<typeof setTimeout> | undefined
  running: boolean
}

interface Delivery {
  readonly id: number
  readonly businessId: string | undefined
  readonly event: string
  readonly body: string
  readonly delayMs: number
}

export type DeliveryOutcome = "ok" | "status" | "redirect" | "timeout" | "error" | "dropped" | "cancelled"

export interface DeliveryEntry {
  readonly seq: number
  readonly at: number
  readonly deliveryId: number
  readonly appId: string
  readonly businessId: string | null
  readonly event: string
  /** 1 for the first try, up to 1 + maxRetries; 0 for a delivery dropped before sending. */
  readonly attempt: number
  readonly outcome: DeliveryOutcome
  readonly status: number | null
  readonly error: string | null
  readonly durationMs: number
  readonly body: string
}

export interface DeliveryQuery {
  readonly since?: number | undefined
  readonly appId?: string | undefined
  readonly businessId?: string | undefined
  readonly event?: string | undefined
  readonly outcome?: string | undefined
  readonly limit?: number | undefined
}

export interface EnableResult {
  readonly enabled: boolean
  readonly outcome: DeliveryOutcome
  readonly status: number | null
  readonly error: string | null
}

export class Webhooks {
  options: WebhookOptions
  readonly subscriptions = new Map<string, Subscription>()
  private log: Array<DeliveryEntry> = []
  private nextSeq = 1
  private nextDelivery = 1
  private closed = false
  private readonly inflight = new Set<Http.ClientRequest>()
  private readonly timers = new Set<{ timer: ReturnType<typeof setTimeout>; resolve: () => void }>()
  private readonly registry: Registry
  private readonly faults: Faults
  private readonly now: () => number
  private readonly logLimit: number

  constructor(options: WebhookOptions, registry: Registry, faults: Faults, now: () => number, logLimit: number) {
    this.options = options
    this.registry = registry
    this.faults = faults
    this.now = now
    this.logLimit = logLimit
  }

  /** Checks a callback URL; returns a reason when it is not acceptable. */
  checkUrl(url: string): string | undefined {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return "callbackUrl is not a valid URL"
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "callbackUrl must be http(s)"
    if (this.options.requireHttps && parsed.protocol !== "https:") return "callbackUrl must be https (spec: Enabling)"
    if (!isLoopbackHost(parsed.hostname)) return "the simulator only delivers to loopback addresses"
    return undefined
  }

  /** Turns webhooks on: sends webhooksEnabled and enables only on a 200 (spec: States). */
  async enable(
    appId: string,
    config: { readonly callbackUrl: string; readonly verifyToken: string; readonly events: ReadonlyArray<EventName> }
  ): Promise<EnableResult> {
    const previous = this.subscriptions.get(appId)
    const sub: Subscription = previous ?? {
      appId,
      status: "off",
      callbackUrl: config.callbackUrl,
      verifyToken: config.verifyToken,
      events: config.events,
      offReason: undefined,
      samples: [],
      strikes: 0,
      attempts: 0,
      successes: 0,
      queue: [],
      held: undefined,
      heldTimer: undefined,
      running: false
    }
    sub.callbackUrl = config.callbackUrl
    sub.verifyToken = config.verifyToken
    sub.events = config.events
    this.subscriptions.set(appId, sub)
    const result = await this.sendCheck(sub)
    if (result.outcome === "ok") {
      sub.status = "enabled"
      sub.offReason = undefined
      sub.samples = []
    } else {
      sub.status = "off"
      sub.offReason = "webhooksEnabled was not answered with HTTP 200"
    }
    return { enabled: result.outcome === "ok", ...result }
  }

  disable(appId: string, reason: string): void {
    const sub = this.subscriptions.get(appId)
    if (sub === undefined) return
    sub.status = "off"
    sub.offReason = reason
    this.cancelQueue(sub, reason)
  }

  remove(appId: string): void {
    this.disable(appId, "application removed")
    this.subscriptions.delete(appId)
  }

  private envelope(sub: Subscription, event: string, businessId: string | undefined, data: unknown): string {
    return Json.stringify({
      event,
      businessId: businessId === undefined ? undefined : BigInt(businessId),
      webhooksVerifyToken: sub.verifyToken,
      data
    })
  }

  private registeredEvents(sub: Subscription): Record<string, string> {
    const out: Record<string, string> = {}
    for (const name of sub.events) out[String(EVENT_IDS[name])] = name
    return out
  }

  private async sendCheck(sub: Subscription): Promise<Omit<EnableResult, "enabled">> {
    const body = this.envelope(sub, "webhooksEnabled", undefined, { registeredEvents: this.registeredEvents(sub) })
    const started = this.now()
    const result = await this.post(sub.callbackUrl, body)
    this.record({
      deliveryId: this.nextDelivery++,
      appId: sub.appId,
      businessId: null,
      event: "webhooksEnabled",
      attempt: 1,
      ...result,
      durationMs: this.now() - started,
      body
    })
    return result
  }

  /** Queues an event for every application entitled to it. Returns how many were queued. */
  emit(businessId: string, event: EventName, data: unknown): number {
    let queued = 0
    const now = this.now()
    for (const sub of this.subscriptions.values()) {
      if (sub.status !== "enabled" || !sub.events.includes(event) || !this.eligible(sub, businessId, now)) continue
      queued++
      this.enqueue(sub, businessId, event, data)
    }
    return queued
  }

  private eligible(sub: Subscription, businessId: string | undefined, now: number): string | undefined {
    const app = this.registry.apps.get(sub.appId)
    if (app === undefined || app.removed) return undefined
    if (app.lockedReason !== undefined) return undefined
    if (sub.status !== "enabled") return undefined
    if (businessId !== undefined && !this.registry.hasValidGrant(sub.appId, businessId, now)) return undefined
    return "ok"
  }

  private enqueue(sub: Subscription, businessId: string, event: EventName, data: unknown): void {
    const context = { appId: sub.appId, businessId, event }
    let body = this.envelope(sub, event, businessId, data)
    const malformed = this.faults.first("webhookMalformed", context)
    if (malformed !== undefined) body = hostileBody(malformed.variant, sub, event, businessId, data)
    const delay = this.faults.take("webhookDelay", context).reduce((sum, f) => sum + f.ms, 0)
    const delivery: Delivery = { id: this.nextDelivery++, businessId, event, body, delayMs: delay }
    if (this.faults.first("webhookDrop", context) !== undefined) {
      this.record({ ...this.entryOf(sub, delivery, 0), outcome: "dropped", status: null, error: "fault: webhookDrop", durationMs: 0 })
      return
    }
    const duplicate = this.faults.first("webhookDuplicate", context)
    const copies = duplicate === undefined ? 1 : 1 + (duplicate.copies ?? 1)
    const reorder = this.faults.first("webhookReorder", context) !== undefined
    const items = Array.from({ length: copies }, (_, i) => i === 0 ? delivery : { ...delivery, id: this.nextDelivery++ })
    if (reorder) {
      if (sub.held !== undefined) this.release(sub)
      sub.held = items[0]
      sub.queue.push(...items.slice(1))
      sub.heldTimer = setTimeout(() => this.release(sub), this.options.reorderHoldMs)
    } else {
      sub.queue.push(...items)
      if (sub.held !== undefined) this.release(sub)
    }
    this.run(sub)
  }

  private release(sub: Subscription): void {
    if (sub.heldTimer !== undefined) clearTimeout(sub.heldTimer)
    sub.heldTimer = undefined
    const held = sub.held
    sub.held = undefined
    if (held === undefined) return
    sub.queue.push(held)
    this.run(sub)
  }

  private entryOf(sub: Subscription, delivery: Delivery, attempt: number) {
    return {
      deliveryId: delivery.id,
      appId: sub.appId,
      businessId: delivery.businessId ?? null,
      event: delivery.event,
      attempt,
      body: delivery.body
    }
  }

  private run(sub: Subscription): void {
    if (sub.running || this.closed) return
    sub.running = true
    void this.drainQueue(sub).finally(() => {
      sub.running = false
      if (sub.queue.length > 0 && !this.closed) this.run(sub)
    })
  }

  private async drainQueue(sub: Subscription): Promise<void> {
    while (sub.queue.length > 0 && !this.closed) {
      const delivery = sub.queue.shift()!
      if (delivery.delayMs > 0) await this.sleep(delivery.delayMs)
      for (let attempt = 1; attempt <= 1 + this.options.maxRetries && !this.closed; attempt++) {
        if (this.eligible(sub, delivery.businessId, this.now()) === undefined) {
          this.record({
            ...this.entryOf(sub, delivery, attempt),
            outcome: "cancelled",
            status: null,
            error: this.cancelReason(sub, delivery.businessId),
            durationMs: 0
          })
          break
        }
        const started = this.now()
        const result = await this.post(sub.callbackUrl, delivery.body)
        this.record({ ...this.entryOf(sub, delivery, attempt), ...result, durationMs: this.now() - started })
        const ok = result.outcome === "ok"
        sub.attempts++
        if (ok) sub.successes++
        await this.sample(sub, ok)
        if (ok) break
        if (attempt <= this.options.maxRetries) {
          const delays = this.options.retryDelaysMs
          await this.sleep(delays[Math.min(attempt - 1, delays.length - 1)] ?? 0)
        }
      }
    }
  }

  private cancelReason(sub: Subscription, businessId: string | undefined): string {
    const app = this.registry.apps.get(sub.appId)
    if (app === undefined || app.removed) return "application removed"
    if (app.lockedReason !== undefined) return `application locked: ${app.lockedReason}`
    if (sub.status !== "enabled") return `webhooks off: ${sub.offReason ?? "switched off"}`
    if (businessId !== undefined && !this.registry.hasValidGrant(sub.appId, businessId, this.now())) {
      return "no valid access token for the business (expired, revoked or app removed)"
    }
    return "not deliverable"
  }

  /** spec: Delivery rule 4: a low success rate re-checks, then switches off, then locks. */
  private async sample(sub: Subscription, ok: boolean): Promise<void> {
    const d = this.options.degradation
    sub.samples.push(ok)
    if (sub.samples.length > d.window) sub.samples.shift()
    if (sub.samples.length < d.minSamples) return
    const rate = sub.samples.filter(Boolean).length / sub.samples.length
    if (rate >= d.below || d.ladder.length === 0) return
    const step = d.ladder[Math.min(sub.strikes, d.ladder.length - 1)]!
    sub.strikes++
    sub.samples = []
    if (step === "recheck") {
      await this.sendCheck(sub)
    } else if (step === "disable") {
      this.disable(sub.appId, `success rate ${rate.toFixed(2)} below ${d.below}`)
    } else {
      const app = this.registry.apps.get(sub.appId)
      if (app !== undefined) app.lockedReason = `webhook success rate ${rate.toFixed(2)} below ${d.below}`
      this.disable(sub.appId, "application locked")
    }
  }

  private cancelQueue(sub: Subscription, reason: string): void {
    if (sub.held !== undefined) this.release(sub)
    for (const delivery of sub.queue.splice(0)) {
      this.record({ ...this.entryOf(sub, delivery, 1), outcome: "cancelled", status: null, error: reason, durationMs: 0 })
    }
  }

  private post(url: string, body: string): Promise<{ outcome: DeliveryOutcome; status: number | null; error: string | null }> {
    return new Promise((resolve) => {
      let settled = false
      const done = (outcome: DeliveryOutcome, status: number | null, error: string | null) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        this.inflight.delete(req)
        resolve({ outcome, status, error })
      }
      const target = new URL(url)
      const client = target.protocol === "https:" ? Https : Http
      const req = client.request(target, {
        method: "POST",
        agent: false,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "user-agent": "ocs-simulator"
        }
      }, (res) => {
        const status = res.statusCode ?? 0
        res.resume()
        res.on("end", () => {
          if (status === 200) done("ok", status, null)
          else if (status >= 300 && status < 400) done("redirect", status, `redirect to ${res.headers.location ?? "?"} not followed`)
          else done("status", status, `HTTP ${status}`)
        })
        res.on("error", (e) => done("error", status, e.message))
      })
      const timer = setTimeout(() => {
        done("timeout", null, `no answer within ${this.options.timeoutMs} ms`)
        req.destroy()
      }, this.options.timeoutMs)
      this.inflight.add(req)
      req.on("error", (e) => done("error", null, e.message))
      req.end(body)
    })
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve()
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.timers.delete(entry)
          resolve()
        }, ms),
        resolve
      }
      this.timers.add(entry)
    })
  }

  private record(entry: Omit<DeliveryEntry, "seq" | "at">): void {
    this.log.push({ ...entry, seq: this.nextSeq++, at: this.now() })
    if (this.log.length > this.logLimit * 2) this.log = this.log.slice(-this.logLimit)
  }

  deliveries(q: DeliveryQuery): ReadonlyArray<DeliveryEntry> {
    const out: Array<DeliveryEntry> = []
    const limit = q.limit ?? Number.MAX_SAFE_INTEGER
    for (const e of this.log) {
      if (out.length >= limit) break
      if (q.since !== undefined && e.seq <= q.since) continue
      if (q.appId !== undefined && e.appId !== q.appId) continue
      if (q.businessId !== undefined && e.businessId !== q.businessId) continue
      if (q.event !== undefined && e.event !== q.event) continue
      if (q.outcome !== undefined && e.outcome !== q.outcome) continue
      out.push(e)
    }
    return out
  }

  get lastSeq(): number {
    return this.nextSeq - 1
  }

  /** Whether nothing is queued, held or being sent. */
  get idle(): boolean {
    for (const sub of this.subscriptions.values()) {
      if (sub.running || sub.queue.length > 0 || sub.held !== undefined) return false
    }
    return true
  }

  /** Resolves true once idle, false after `timeoutMs`. */
  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    while (!this.idle) {
      if (Date.now() >= deadline || this.closed) return this.idle
      await new Promise((r) => setTimeout(r, 5))
    }
    return true
  }

  clearLog(): void {
    this.log = []
  }

  /** Forgets every subscription and stops sending (reset). */
  reset(): void {
    for (const sub of this.subscriptions.values()) {
      sub.queue.length = 0
      if (sub.heldTimer !== undefined) clearTimeout(sub.heldTimer)
      sub.held = undefined
      sub.status = "off"
    }
    this.subscriptions.clear()
    for (const req of this.inflight) req.destroy()
    this.log = []
  }

  close(): void {
    this.closed = true
    for (const sub of this.subscriptions.values()) if (sub.heldTimer !== undefined) clearTimeout(sub.heldTimer)
    for (const req of this.inflight) req.destroy()
    for (const entry of this.timers) {
      clearTimeout(entry.timer)
      entry.resolve()
    }
  }
}

/** Bodies for hostile-input tests of a webhook receiver. */
const hostileBody = (
  variant: "nonJson" | "wrongTypes" | "hugeNumbers" | "wrongVerifyToken" | "missingFields" | "huge",
  sub: Subscription,
  event: string,
  businessId: string,
  data: unknown
): string => {
  switch (variant) {
    case "nonJson":
      return `<html><body>${event} for ${businessId}</body></html>`
    case "wrongTypes":
      return Json.stringify({ event: [event], businessId: `b${businessId}`, webhooksVerifyToken: sub.verifyToken, data: "data" })
    case "hugeNumbers":
      return `{"event":${JSON.stringify(event)},"businessId":1${"0".repeat(400)},"webhooksVerifyToken":${
        JSON.stringify(sub.verifyToken)
      },"data":{"id":1e999,"price":-1e400,"quantity":123456789012345678901234567890.123456789}}`
    case "wrongVerifyToken":
      return Json.stringify({ event, businessId: BigInt(businessId), webhooksVerifyToken: `wrong-${sub.verifyToken}`, data })
    case "missingFields":
      return Json.stringify({ data })
    case "huge":
      return Json.stringify({
        event,
        businessId: BigInt(businessId),
        webhooksVerifyToken: sub.verifyToken,
        data: { padding: "x".repeat(4 * 1024 * 1024) }
      })
  }
}
