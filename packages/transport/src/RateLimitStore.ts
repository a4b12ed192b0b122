/**
 * Where the rate limiter keeps what must survive a restart: the locks (spec: Limits rule 2:
 * no call to a locked URL before unlockedAt) and the recent calls of each budget key (so a
 * restart does not spend the budget twice).
 *
 * A call is written when it is granted, before it leaves the process, and its completion
 * time is written with the next batch. After a crash, a call whose completion was not written
 * is counted as completing at restart time: conservative, never over budget.
 */
import Database from "better-sqlite3"
import { Context, Effect, Layer, Schema } from "effect"

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
}>()("@ocs/transport/RateLimitStore") {
  /** In memory: for tests, and for processes that accept losing the budget on restart. */
  static readonly layerMemory: Layer.Layer<RateLimitStore> = Layer.sync(RateLimitStore, () => makeMemory())

  /** A SQLite file (WAL). */
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

const SCHEMA = `
CREATE TABLE IF NOT EXISTS rate_keys (
  key TEXT PRIMARY KEY,
  limit_requests INTEGER NOT NULL,
  window_ms INTEGER NOT NULL,
  locked_until INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rate_calls (
  session TEXT NOT NULL,
  id INTEGER NOT NULL,
  key TEXT NOT NULL,
  granted_at INTEGER NOT NULL,
  completed_at INTEGER,
  PRIMARY KEY (session, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rate_calls_by_key ON rate_calls (key, completed_at);
`

const makeSqlite = (filename: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const db = new Database(filename)
        db.pragma("journal_mode = WAL")
        db.pragma("synchronous = NORMAL")
        db.pragma("busy_timeout = 5000")
        db.exec(SCHEMA)
        return db
      },
      catch: (cause) => new RateLimitStoreError({ message: `cannot open rate-limit store ${filename}`, cause })
    }),
    (db) => Effect.sync(() => db.close())
  ).pipe(
    Effect.map((db) => {
      const session = crypto.randomUUID()
      const upsertKey = db.prepare(
        "INSERT INTO rate_keys (key, limit_requests, window_ms) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET limit_requests = excluded.limit_requests, window_ms = excluded.window_ms"
      )
      const insertCall = db.prepare("INSERT INTO rate_calls (session, id, key, granted_at) VALUES (?, ?, ?, ?)")
      const completeCall = db.prepare("UPDATE rate_calls SET completed_at = ? WHERE session = ? AND id = ?")
      const lockKey = db.prepare(
        "INSERT INTO rate_keys (key, limit_requests, window_ms, locked_until) VALUES (?, 0, 0, ?) ON CONFLICT(key) DO UPDATE SET locked_until = max(locked_until, excluded.locked_until)"
      )
      const seenKeys = new Set<string>()
      const writeTx = db.transaction((batch: Batch) => {
        for (const g of batch.grants) {
          const sig = `${g.key}|${g.limit}|${g.windowMs}`
          if (!seenKeys.has(sig)) {
            upsertKey.run(g.key, g.limit, g.windowMs)
            seenKeys.add(sig)
          }
          insertCall.run(session, g.id, g.key, g.at)
        }
        for (const c of batch.completions) completeCall.run(c.at, session, c.id)
      })
      const fail = (what: string) => (cause: unknown) => new RateLimitStoreError({ message: `rate-limit store: ${what} failed`, cause })
      return RateLimitStore.of({
        load: (now) =>
          Effect.try({
            try: () => {
              const keys = db.prepare("SELECT key, limit_requests AS l, window_ms AS w, locked_until AS u FROM rate_keys").all() as Array<
                { key: string; l: number; w: number; u: number }
              >
              const calls = db
                .prepare(
                  "SELECT key, CASE WHEN completed_at IS NULL AND granted_at > ? THEN ? ELSE coalesce(completed_at, granted_at) END AS at FROM rate_calls"
                )
                .all(now - MAX_CALL_MS, now) as Array<{ key: string; at: number }>
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
            },
            catch: fail("load")
          }),
        write: (batch) => Effect.try({ try: () => writeTx(batch), catch: fail("write") }),
        lock: (key, until) => Effect.try({ try: () => void lockKey.run(key, until), catch: fail("lock") }),
        prune: (before) =>
          Effect.try({
            try: () => void db.prepare("DELETE FROM rate_calls WHERE coalesce(completed_at, granted_at) < ?").run(before),
            catch: fail("prune")
          })
      })
    })
  )
