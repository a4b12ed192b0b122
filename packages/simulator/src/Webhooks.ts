/**
 * The webhook sender (docs/api-catalogue.md, §10 Webhooks). Per application: a callback URL, a verify token and the
 * chosen events. Enabling sends `webhooksEnabled` and succeeds only on an HTTP 200. Data
 * changes are delivered to every application that chose the event and holds a valid token
 * for the business (docs/api-catalogue.md, Delivery rules 5), one delivery at a time per application, in order.
 *
 * A delivery fails on any status other than 200 (redirects are not followed: docs/api-catalogue.md, Delivery
 * rule 8), on a connection error, or when the answer is slower than `timeoutMs`; it is
 * repeated at most `maxRetries` (3) times. The success rate over the last `window` attempts
 * drives a ladder of actions (docs/api-catalogue.md, Delivery rules 4): each time it falls below `below`, the
 * next step runs: re-send webhooksEnabled, then switch webhooks off, then lock the app.
 */
import type * as Http from "node:http"
import type { Registry } from "./Auth.ts"
import { type DeliveryEntry, DeliveryLog, type DeliveryQuery } from "./DeliveryLog.ts"
import type { Faults } from "./Faults.ts"
import { isLoopbackHost } from "./internal/Http.ts"
import { envelope, hostileBody } from "./WebhookBodies.ts"
import { EVENT_IDS, type EventName } from "./WebhookEvents.ts"
import type { WebhookOptions } from "./WebhookOptions.ts"
import { post, type PostResult } from "./WebhookPost.ts"

// Kept here too, so imports of this module from before the split keep working.
export { EVENT_IDS, type EventName, eventNames } from "./WebhookEvents.ts"
export { type DeliveryEntry, type DeliveryOutcome, type DeliveryQuery } from "./DeliveryLog.ts"
export { type DegradationStep, defaultWebhookOptions, type WebhookOptions } from "./WebhookOptions.ts"

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

export interface EnableResult extends PostResult {
  readonly enabled: boolean
}

export class Webhooks {
  options: WebhookOptions
  readonly subscriptions = new Map<string, Subscription>()
  private readonly log: DeliveryLog
  private nextDelivery = 1
  private closed = false
  private readonly inflight = new Set<Http.ClientRequest>()
  private readonly timers = new Set<{ timer: ReturnType<typeof setTimeout>; resolve: () => void }>()
  private readonly registry: Registry
  private readonly faults: Faults
  private readonly now: () => number

  constructor(options: WebhookOptions, registry: Registry, faults: Faults, now: () => number, logLimit: number) {
    this.options = options
    this.registry = registry
    this.faults = faults
    this.now = now
    this.log = new DeliveryLog(logLimit)
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

  /** Turns webhooks on: sends webhooksEnabled and enables only on a 200 (docs/api-catalogue.md, States). */
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

  private registeredEvents(sub: Subscription): Record<string, string> {
    const out: Record<string, string> = {}
    for (const name of sub.events) out[String(EVENT_IDS[name])] = name
    return out
  }

  private async sendCheck(sub: Subscription): Promise<PostResult> {
    const body = envelope(sub.verifyToken, "webhooksEnabled", undefined, { registeredEvents: this.registeredEvents(sub) })
    const started = this.now()
    const result = await post(sub.callbackUrl, body, this.options.timeoutMs, this.inflight)
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

  /**
   * Queues an event for every application entitled to it (`onlyApp`: for that one only, as
   * appUninstalled goes to the app removed). Returns how many were queued.
   */
  emit(businessId: string, event: EventName, data: unknown, onlyApp?: string): number {
    let queued = 0
    const now = this.now()
    for (const sub of this.subscriptions.values()) {
      if (onlyApp !== undefined && sub.appId !== onlyApp) continue
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
    let body = envelope(sub.verifyToken, event, businessId, data)
    const malformed = this.faults.first("webhookMalformed", context)
    if (malformed !== undefined) body = hostileBody(malformed.variant, sub.verifyToken, event, businessId, data)
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
        const result = await post(sub.callbackUrl, delivery.body, this.options.timeoutMs, this.inflight)
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

  /** docs/api-catalogue.md, Delivery rules 4: a low success rate re-checks, then switches off, then locks. */
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
    this.log.add({ ...entry, at: this.now() })
  }

  deliveries(q: DeliveryQuery): ReadonlyArray<DeliveryEntry> {
    return this.log.query(q)
  }

  get lastSeq(): number {
    return this.log.lastSeq
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
    this.log.clear()
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
    this.log.clear()
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
