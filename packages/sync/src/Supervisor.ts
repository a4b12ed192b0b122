/**
 * The per-tenant loops: one per active tenant this server owns, started and stopped as the
 * registry changes. A loop syncs what is due, then pauses until the next period or until a gap
 * fill wakes it. The first pass after a start is a gap fill (what changed while the server was
 * down), and so is a pass after the tenant's webhooks were silent for its silence period. With
 * `concurrency`, at most that many tenants run their passes at once; the others wait for a slot
 * (a slot is held for the tenant's whole round of passes, its waits for budget included).
 */
import { Clock, Deferred, Duration, Effect, FiberMap, Option, Random, Schedule, type Scope, Semaphore } from "effect"
import { Ids } from "@ocs/protocol"
import { Ownership } from "./Ownership.ts"
import * as Planner from "./Planner.ts"
import type { SyncTenant } from "./SyncTenants.ts"
import { SyncTenants } from "./SyncTenants.ts"

export interface SupervisorOptions {
  readonly intervalMs: number
  readonly reconcileMs: number
  readonly gapFillSilenceMs: number
  /** Tenants whose passes run at once; undefined: no bound. */
  readonly concurrency: number | undefined
  readonly superviseEveryMs: number
  readonly runLoop?: ((name: string, loop: Effect.Effect<never>) => Effect.Effect<never>) | undefined
}

export interface Supervisor {
  /** Every tenant of the application (or the one named) owes an incremental pull, run as soon as its loop is free. */
  readonly gapFill: (target: { readonly appId: string; readonly businessId?: string | undefined }, reason: string) => Effect.Effect<void>
  /** Starts the loops and keeps them in step with the registry; they stop with the scope. */
  readonly start: Effect.Effect<void, never, Scope.Scope>
}


/** `syncTenant` runs every resource of a tenant (`gapFill`: incremental passes are due now). */
export const make = Effect.fnUntraced(function*(
  options: SupervisorOptions,
  syncTenant: (appId: string, businessId: string, options: { readonly gapFill: boolean }) => Effect.Effect<unknown>
) {
  const tenants = yield* SyncTenants
  const ownership = yield* Ownership
  const slots = options.concurrency === undefined ? undefined : yield* Semaphore.make(options.concurrency)
  const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>) => slots === undefined ? effect : Semaphore.withPermit(slots)(effect)

  /** Tenants that owe an incremental pull (gap fill), and how to wake each tenant's loop. */
  const owed = new Set<Ids.TenantKey>()
  const wakers = new Map<Ids.TenantKey, Deferred.Deferred<void>>()

  const gapFill = (target: { readonly appId: string; readonly businessId?: string | undefined }, reason: string) =>
    Effect.gen(function*() {
      const targets = target.businessId !== undefined
        ? [{ appId: target.appId, businessId: target.businessId }]
        : yield* tenants.tenants({ appId: target.appId, status: "active" }).pipe(Effect.orElseSucceed(() => []))
      for (const t of targets) {
        const k = Ids.tenantKey(t)
        owed.add(k)
        const wake = wakers.get(k)
        if (wake !== undefined) yield* Deferred.succeed(wake, undefined)
      }
      if (targets.length > 0) yield* Effect.logInfo(`gap fill (${reason}): ${targets.length} tenant(s) of ${target.appId} pull what changed`)
    })

  const tenantLoop = (appId: string, businessId: string) =>
    Effect.gen(function*() {
      const k = Ids.tenantKey({ appId, businessId })
      owed.add(k)
      let quietSince = yield* Clock.currentTimeMillis
      for (;;) {
        const t: SyncTenant | undefined = Option.getOrUndefined(yield* tenants.tenant(appId, businessId).pipe(Effect.orElseSucceed(() => Option.none<SyncTenant>())))
        const now = yield* Clock.currentTimeMillis
        const silenceMs = Planner.silenceMillis(t, options.gapFillSilenceMs)
        quietSince = Math.max(quietSince, t?.lastWebhookAt ?? 0)
        if (now - quietSince >= silenceMs) {
          owed.add(k)
          quietSince = now
        }
        const gap = owed.delete(k)
        yield* bounded(syncTenant(appId, businessId, { gapFill: gap }))
        if (owed.has(k)) continue
        const wake = yield* Deferred.make<void>()
        wakers.set(k, wake)
        const pause = Planner.pauseMillis(t, { intervalMs: options.intervalMs, reconcileMs: options.reconcileMs, silenceMs }, yield* Random.next)
        yield* Effect.race(Effect.sleep(Duration.millis(pause)), Deferred.await(wake))
        wakers.delete(k)
      }
    })

  const start = Effect.gen(function*() {
    const loops = yield* FiberMap.make<Ids.TenantKey>()
    const running = new Set<Ids.TenantKey>()
    const supervise = Effect.gen(function*() {
      const all = yield* tenants.tenants({ status: "active" }).pipe(Effect.orElseSucceed(() => []))
      // With several servers, only the tenants this one owns.
      const active = all.filter((t) => ownership.owns(t.appId, t.businessId))
      const wanted = new Set(active.map((t) => Ids.tenantKey(t)))
      for (const t of active) {
        const k = Ids.tenantKey(t)
        if (running.has(k)) continue
        running.add(k)
        yield* FiberMap.run(loops, k, tenantLoop(t.appId, t.businessId))
      }
      for (const k of running) {
        if (wanted.has(k)) continue
        running.delete(k)
        yield* FiberMap.remove(loops, k)
      }
    })
    // Interrupted when the caller's scope closes, which also interrupts every tenant loop (the
    // FiberMap belongs to the same scope).
    const loop = supervise.pipe(Effect.repeat(Schedule.spaced(options.superviseEveryMs)), Effect.andThen(Effect.never))
    yield* Effect.forkScoped(options.runLoop === undefined ? loop : options.runLoop("sync-supervisor", loop))
  })

  return { gapFill, start } satisfies Supervisor
})
