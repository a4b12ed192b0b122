/**
 * One ledger, several servers (docs/architecture.md §4.31, as §4.18/§4.19 do things): the
 * records in the log are the truth, every server follows them, the owner of a tenant acts.
 *
 * - **Following.** After the start's fold, a subscription to the log's command records folds
 *   every other server's transitions into this engine's commands, so any server shows any
 *   command's state (within the relay's linger and a fetch).
 * - **Keys.** A request is answered once the log shows it: the first request the log holds for
 *   a tenant's idempotency key is the command (every server reads a tenant's partition in the
 *   same order, so all agree); a later one with that key, on any server, names it (same
 *   payload) or is refused (another payload). The losing request's record stays in the log and
 *   is never sent; the read models keep the first too (one dedupe key).
 * - **The owner sends.** Only the server owning the tenant (`CommandOwnership`) drives its
 *   commands: one asked elsewhere is sent by the owner once it follows the request; a sweep
 *   takes over the open commands of tenants gained (an attempt in flight on a dead owner is in
 *   doubt and resolved by reading back, as after a crash).
 * - **The fence.** An attempt goes out only once its `sent` record is back from the log with no
 *   other server's `sent` of that attempt or a later one before it (folded since this server
 *   began driving the command): the first claim in the log wins, the other backs off and leaves
 *   the command to it. So a sent is on the shared log before its call (a dead server's disk
 *   never hides one), and two servers that both believe they own a tenant (a follower lagging
 *   behind a dead owner's records) never both send.
 */
import { Checkpoints, type EventLog, EventLogError, type LogRecord } from "@ocs/event-log"
import { EngineRecordCommands, Ids } from "@ocs/protocol"
import { Deferred, Duration, Effect, Option, Schedule, type Scope, Stream } from "effect"
import type { Command } from "../Command.ts"
import * as Ledger from "../CommandLedger.ts"

/** What the follower needs of the engine. */
export interface EngineState {
  readonly commands: Map<string, Command>
  readonly byKey: Map<string, string>
  readonly keyOf: (tenant: Ids.TenantRef, key: string) => string
  readonly running: ReadonlySet<string>
  readonly resumable: (c: Command) => boolean
  /** Starts driving a command (owned, not running here). */
  readonly launch: (c: Command) => Effect.Effect<void>
  /** A person's retry asked on another server: driven here as the engine's retry does. */
  readonly launchRetried: (c: Command) => Effect.Effect<void>
  /** Wakes the command's waiters when it is final or left to a person. */
  readonly settle: (c: Command) => Effect.Effect<void>
}

export interface Options {
  readonly owns: (tenant: Ids.TenantRef) => boolean
  /** How often the open commands of owned tenants are looked over for a takeover (default 500 ms). */
  readonly sweepMs?: number | undefined
  /** How long a request waits for the log to show it, and an attempt for its fence (default 30 s). */
  readonly waitMs?: number | undefined
}

/** Where the start's fold of the log stopped, per partition (Kafka) or in the file (SQLite). */
export class Positions {
  readonly next = new Map<number, string>()
  last = -1
  /** Notes a record; false when it is at or before a position already seen (a repeat). */
  see(r: LogRecord.LogRecord): boolean {
    if (r.kafka !== undefined) {
      const at = Number(r.kafka.offset)
      const next = Number(this.next.get(r.kafka.partition) ?? "0")
      if (at < next) return false
      this.next.set(r.kafka.partition, String(at + 1))
      return true
    }
    if (r.offset <= this.last) return false
    this.last = r.offset
    return true
  }
  checkpoint(): LogRecord.Checkpoint | undefined {
    if (this.next.size > 0) return Checkpoints.kafka(this.next)
    return this.last >= 0 ? Checkpoints.sqlite(this.last) : undefined
  }
}

export const make = (options: Options, log: EventLog.EventLogService, positions: Positions) => {
  const waitMs = options.waitMs ?? 30_000
  /** Ids of the records this engine appended and the follower has not seen back yet. */
  const mine = new Set<string>()
  /** Requests waiting for the log to decide their key: key -> the winner's command id. */
  const deciding = new Map<string, Deferred.Deferred<string>>()
  /** Per command driven here: the latest attempt of another server's `sent` folded since. */
  const foreignSent = new Map<string, number>()
  /** Per command: the latest attempt of this server's own `sent` seen back from the log. */
  const ownSent = new Map<string, number>()
  const fences = new Map<string, { readonly attempt: number; readonly done: Deferred.Deferred<void> }>()
  /**
   * Commands whose attempt another server claimed first: left to it for a while (it is sending),
   * then taken up again if still open (its sent in doubt, read back).
   */
  const leftTo = new Map<string, number>()

  /** The log as the engine appends to it: the ids of its own records are remembered. */
  const appending: EventLog.EventLogService = {
    ...log,
    append: (batch) =>
      Effect.tap(log.append(batch), (results) =>
        Effect.sync(() => {
          for (const r of results) if (r._tag === "Appended") mine.add(r.id)
        }))
  }

  const unavailable = (what: string) =>
    new EventLogError.KafkaUnavailable({ brokers: [], message: `the shared log did not show ${what} within ${waitMs} ms`, cause: undefined })

  /** The command the log holds for a tenant's key: the first request it shows with it. */
  const decided = (key: string, byKey: ReadonlyMap<string, string>): Effect.Effect<string, EventLogError.KafkaUnavailable> =>
    Effect.suspend(() => {
      const known = byKey.get(key)
      if (known !== undefined) return Effect.succeed(known)
      let waiting = deciding.get(key)
      if (waiting === undefined) {
        waiting = Deferred.makeUnsafe<string>()
        deciding.set(key, waiting)
      }
      return Deferred.await(waiting).pipe(
        Effect.timeoutOrElse({ duration: Duration.millis(waitMs), orElse: () => Effect.fail(unavailable("the request")) })
      )
    })

  /**
   * After this server's `sent` of `attempt`: waits until the log shows it, then answers whether
   * this server holds the attempt (no other server's `sent` of it or a later one came first).
   */
  const fence = (id: string, attempt: number): Effect.Effect<boolean> =>
    Effect.suspend(() => {
      const ours = () => {
        if ((foreignSent.get(id) ?? 0) < attempt) return true
        leftTo.set(id, Date.now() + waitMs)
        return false
      }
      if ((ownSent.get(id) ?? 0) >= attempt) return Effect.succeed(ours())
      const done = Deferred.makeUnsafe<void>()
      fences.set(id, { attempt, done })
      return Deferred.await(done).pipe(
        Effect.map(ours),
        // Not shown in time: nothing goes out; the sweep takes the command up again, its sent in doubt.
        Effect.timeoutOrElse({ duration: Duration.millis(waitMs), orElse: () => Effect.succeed(false) }),
        Effect.ensuring(Effect.sync(() => fences.delete(id)))
      )
    })

  const onRecord = (engine: EngineState, r: LogRecord.LogRecord): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (!positions.see(r) || r.businessId === null) return Effect.void
      const found = Ledger.transitionOf(r)
      if (Option.isNone(found)) return Effect.void
      const t = found.value
      const tenant: Ids.TenantRef = { appId: r.appId, businessId: r.businessId }
      const own = mine.delete(r.id)
      if (t.state === "requested") {
        const key = engine.keyOf(tenant, t.idempotencyKey)
        let winner = engine.byKey.get(key)
        let launch: Command | undefined
        if (winner === undefined) {
          const c = engine.commands.get(t.command) ?? Ledger.step(undefined, tenant, t, r.receivedAt)
          if (c === undefined) return Effect.void
          winner = c.id
          engine.byKey.set(key, c.id)
          engine.commands.set(c.id, c)
          if (options.owns(tenant) && engine.resumable(c) && !engine.running.has(c.id)) launch = c
        }
        const waiting = deciding.get(key)
        deciding.delete(key)
        return Effect.andThen(
          waiting === undefined ? Effect.void : Deferred.succeed(waiting, winner),
          launch === undefined ? Effect.void : takeUp(engine, launch)
        )
      }
      if (t.state === "retried") foreignSent.delete(t.command)
      if (own) {
        // Applied when appended; what the fence waits for.
        if (t.state !== "sent") return Effect.void
        ownSent.set(t.command, Math.max(ownSent.get(t.command) ?? 0, t.attempt))
        const waiting = fences.get(t.command)
        return waiting !== undefined && t.attempt >= waiting.attempt ? Deferred.succeed(waiting.done, undefined) : Effect.void
      }
      const before = engine.commands.get(t.command)
      if (before === undefined) return Effect.void
      if (t.state === "sent" && engine.running.has(t.command)) foreignSent.set(t.command, Math.max(foreignSent.get(t.command) ?? 0, t.attempt))
      const next = Ledger.step(before, tenant, t, r.receivedAt)!
      engine.commands.set(next.id, next)
      return Effect.andThen(
        engine.settle(next),
        t.state === "retried" && options.owns(tenant) && !engine.running.has(next.id) ? engine.launchRetried(next) : Effect.void
      )
    })

  const takeUp = (engine: EngineState, c: Command) =>
    Effect.suspend(() => {
      foreignSent.delete(c.id)
      return engine.launch(c)
    })

  /** The open commands of the tenants owned now and driven nowhere here: taken up. */
  const sweep = (engine: EngineState) =>
    Effect.suspend(() => {
      const open: Array<Command> = []
      const now = Date.now()
      for (const [id, until] of leftTo) if (until <= now) leftTo.delete(id)
      for (const c of engine.commands.values()) {
        if (engine.resumable(c) && !engine.running.has(c.id) && !leftTo.has(c.id) && options.owns(c.tenant)) open.push(c)
      }
      return Effect.forEach(open, (c) => takeUp(engine, c), { discard: true })
    })

  /** Follows the log from where the start's fold stopped, and sweeps; both for the scope's life. */
  const start = (engine: EngineState): Effect.Effect<void, never, Scope.Scope> =>
    Effect.gen(function*() {
      const follow = Effect.suspend(() =>
        log.subscribe("commands-follower", { tenant: "all", types: [EngineRecordCommands.COMMAND_TYPE], from: positions.checkpoint() }).pipe(
          Stream.runForEach((d) => onRecord(engine, d.record))
        )
      ).pipe(
        Effect.tapError((e) => Effect.logWarning("CommandEngine: following the shared ledger failed; following again", e)),
        Effect.retry(Schedule.spaced("1 second"))
      )
      yield* Effect.forkScoped(follow)
      yield* Effect.forkScoped(Effect.repeat(sweep(engine), Schedule.spaced(Duration.millis(options.sweepMs ?? 500))))
    })

  return { appending, decided, fence, start, owns: options.owns }
}

export type Shared = ReturnType<typeof make>
