/**
 * Where the rate limiter keeps what must survive a restart: the locks (docs/api-catalogue.md, Limits 2:
 * no call to a locked URL before unlockedAt) and the recent calls of each budget key (so a
 * restart does not spend the budget twice).
 *
 * A call is written when it is granted, before it leaves the process, and its completion
 * time is written with the next batch. After a crash, a call whose completion was not written
 * is counted as completing at restart time: conservative, never over budget.
 */
import { SqliteDatabase } from "@ocs/sqlite"
import { Context, Effect, Layer, Schema, type Stream } from "effect"
import * as NodeUrl from "node:url"

export class RateLimitStoreError extends Schema.TaggedError<RateLimitStoreError>()("RateLimitStoreError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * No call is in flight longer than this (request timeouts are far shorter): a call granted
 * earlier whose completion was never written completed at the latest this long after.
 */
export const MAX_CALL_MS = 10 * 60 * 1000

export interface PersistedKey {
  readonly key: string
  readonly limit: number
  readonly windowMs: number
  readonly lockedUntil: number
  /** Completion times (ms) of calls that may still count in the window. */
  readonly completions: ReadonlyArray<number>
}

export interface Grant {
  readonly id: number
  readonly key: string
  readonly limit: number
  readonly windowMs: number
  readonly at: number
}

/** A lock another process received: no call for `key` before `until` (ms). */
export interface RemoteLock {
  readonly key: string
  readonly until: number
}

/** A call another process made (completed at `at`, ms) for `key`: it spends this budget too. */
export interface RemoteCall {
  readonly key: string
  readonly limit: number
  readonly windowMs: number
  readonly at: number
}

export interface Completion {
  readonly id: number
  readonly at: number
}

export interface Batch {
  readonly grants: ReadonlyArray<Grant>
  readonly completions: ReadonlyArray<Completion>
}

export class RateLimitStore extends Context.Service<RateLimitStore, {
  /** Keys with a lock still running or calls still inside their window at `now`. */
  readonly load: (now: number) => Effect.Effect<ReadonlyArray<PersistedKey>, RateLimitStoreError>
  /** Writes grants (durably, before the calls leave) and completions, in one transaction. */
  readonly write: (batch: Batch) => Effect.Effect<void, RateLimitStoreError>
  readonly lock: (key: string, until: number) => Effect.Effect<void, RateLimitStoreError>
  /** Forgets calls that completed before `before`. */
  readonly prune: (before: number) => Effect.Effect<void, RateLimitStoreError>
  /**
   * Locks received elsewhere (another process sharing this store's state), while they come:
   * the limiter holds each one like a lock it received itself. Absent for a store of one
   * process (SQLite, memory).
   */
  readonly remoteLocks?: Stream.Stream<RemoteLock> | undefined
  /**
   * Calls made elsewhere (another process sharing this store's state), while they come: the
   * limiter counts each in the key's window like a call it made itself, so the processes share
   * one budget per key. Absent for a store of one process.
   */
  readonly remoteCalls?: Stream.Stream<RemoteCall> | undefined
}>()("@ocs/transport/RateLimitStore") {
  /** In memory: for tests, and for processes that accept losing the budget on restart. */
  static readonly layerMemory: Layer.Layer<RateLimitStore> = Layer.sync(RateLimitStore, () => makeMemory())

  /** A SQLite file (WAL, owner-only), opened through `@ocs/sqlite` with the migrations of `drizzle/`. */
  static readonly layerSqlite = (options: { readonly filename: string }): Layer.Layer<RateLimitStore, RateLimitStoreError> =>
    Layer.effect(RateLimitStore, makeSqlite(options.filename))
}

/** A memory store whose contents outlive the limiters that use it (to test restarts). */
export const makeMemory = (): RateLimitStore["Service"] => {
  const keys = new Map<string, { limit: number; windowMs: number; lockedUntil: number }>()
  const calls = new Map<number, { key: string; at: number; completedAt: number | undefined }>()
  let session = 0
  // Ids restart with each limiter: offset them so that two sessions never collide.
  const offset = () => ++session * 1_000_000_000
  let base = offset()
  return RateLimitStore.of({
    load: (now) =>
      Effect.sync(() => {
        base = offset()
        const out = new Map<string, Array<number>>()
        for (const c of calls.values()) {
          const k = keys.get(c.key)
          const at = c.completedAt ?? (c.at > now - MAX_CALL_MS ? now : c.at)
          if (k !== undefined && at > now - k.windowMs - 1) {
            const list = out.get(c.key) ?? []
            list.push(at)
            out.set(c.key, list)
          }
        }
        return [...keys.entries()]
          .filter(([key, k]) => k.lockedUntil > now || out.has(key))
          .map(([key, k]) => ({ key, ...k, completions: out.get(key) ?? [] }))
      }),
    write: (batch) =>
      Effect.sync(() => {
        for (const g of batch.grants) {
          const k = keys.get(g.key)
          keys.set(g.key, { limit: g.limit, windowMs: g.windowMs, lockedUntil: k?.lockedUntil ?? 0 })
          calls.set(base + g.id, { key: g.key, at: g.at, completedAt: undefined })
        }
        for (const c of batch.completions) {
          const call = calls.get(base + c.id)
          if (call !== undefined) call.completedAt = c.at
        }
      }),
    lock: (key, until) =>
      Effect.sync(() => {
        const k = keys.get(key) ?? { limit: 0, windowMs: 0, lockedUntil: 0 }
        keys.set(key, { ...k, lockedUntil: Math.max(k.lockedUntil, until) })
      }),
    prune: (before) =>
      Effect.sync(() => {
        for (const [id, c] of calls) if ((c.completedAt ?? Infinity) < before) calls.delete(id)
      })
  })
}

/** The drizzle-kit migrations folder of rate-limit store files (run at open). */
export const migrationsFolder = NodeUrl.fileURLToPath(new URL("../drizzle", import.meta.url))

const makeSqlite = Effect.fnUntraced(function*(filename: string) {
  // NORMAL, as ever for this file: a process crash loses nothing; a power loss may lose the
  // last commits (the record of the calls made just before it), which the scheduler accepts
  // for not waiting on an fsync per batch of grants.
  const handle = yield* SqliteDatabase.make({ filename, migrationsFolder, synchronous: "NORMAL" }).pipe(
    Effect.mapError((cause) => new RateLimitStoreError({ message: `cannot open rate-limit store ${filename}`, cause }))
  )
  const use = <A>(what: string, f: () => A): Effect.Effect<A, RateLimitStoreError> =>
    handle.use(what, f).pipe(Effect.mapError((cause) => new RateLimitStoreError({ message: `rate-limit store: ${what} failed`, cause })))

  const session = crypto.randomUUID()
  // Prepared once: write and lock run on the scheduler's path, for every granted call.
  const s = yield* use("prepare", () => {
    const db = handle.client
    return {
      upsertKey: db.prepare<[string, number, number]>(
        "INSERT INTO rate_keys (key, limit_requests, window_ms) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET limit_requests = excluded.limit_requests, window_ms = excluded.window_ms"
      ),
      insertCall: db.prepare<[string, number, string, number]>("INSERT INTO rate_calls (session, id, key, granted_at) VALUES (?, ?, ?, ?)"),
      completeCall: db.prepare<[number, string, number]>("UPDATE rate_calls SET completed_at = ? WHERE session = ? AND id = ?"),
      lockKey: db.prepare<[string, number]>(
        "INSERT INTO rate_keys (key, limit_requests, window_ms, locked_until) VALUES (?, 0, 0, ?) ON CONFLICT(key) DO UPDATE SET locked_until = max(locked_until, excluded.locked_until)"
      ),
      keys: db.prepare<[], { key: string; l: number; w: number; u: number }>("SELECT key, limit_requests AS l, window_ms AS w, locked_until AS u FROM rate_keys"),
      calls: db.prepare<[number, number], { key: string; at: number }>(
        "SELECT key, CASE WHEN completed_at IS NULL AND granted_at > ? THEN ? ELSE coalesce(completed_at, granted_at) END AS at FROM rate_calls"
      ),
      prune: db.prepare<[number]>("DELETE FROM rate_calls WHERE coalesce(completed_at, granted_at) < ?")
    }
  })
  const seenKeys = new Set<string>()
  const writeTx = handle.client.transaction((batch: Batch) => {
    for (const g of batch.grants) {
      const sig = `${g.key}|${g.limit}|${g.windowMs}`
      if (!seenKeys.has(sig)) {
        s.upsertKey.run(g.key, g.limit, g.windowMs)
        seenKeys.add(sig)
      }
      s.insertCall.run(session, g.id, g.key, g.at)
    }
    for (const c of batch.completions) s.completeCall.run(c.at, session, c.id)
  })
  return RateLimitStore.of({
    load: (now) =>
      use("load", () => {
        const keys = s.keys.all()
        const calls = s.calls.all(now - MAX_CALL_MS, now)
        const byKey = new Map<string, Array<number>>()
        const windows = new Map(keys.map((k) => [k.key, k.w]))
        for (const c of calls) {
          const w = windows.get(c.key)
          if (w === undefined || c.at <= now - w - 1) continue
          const list = byKey.get(c.key) ?? []
          list.push(c.at)
          byKey.set(c.key, list)
        }
        return keys
          .filter((k) => k.u > now || byKey.has(k.key))
          .map((k) => ({ key: k.key, limit: k.l, windowMs: k.w, lockedUntil: k.u, completions: byKey.get(k.key) ?? [] }))
      }),
    write: (batch) => use("write", () => writeTx(batch)),
    lock: (key, until) => use("lock", () => void s.lockKey.run(key, until)),
    prune: (before) => use("prune", () => void s.prune.run(before))
  })
})
