/**
 * The ledger of commands is the event log (docs/architecture.md §4.31): each transition is one
 * record of `EngineRecordCommands`, appended durably before the engine moves on. This module
 * writes them and folds them back into commands: the engine folds the whole log at start to
 * resume; the read models project the same records into the `commands` table.
 */
import { DirectAppend, EventLog, type EventLogError, type LogRecord } from "@ocs/event-log"
import { CommandKind, EngineRecordCommands, Ids } from "@ocs/protocol"
import { Clock, Effect, Option, Stream } from "effect"
import type { Command } from "./Command.ts"

type Transition = EngineRecordCommands.Transition

/** The command after one transition (`undefined` before its request). Pure: the fold of the log. */
export const step = (command: Command | undefined, tenant: Ids.TenantRef, t: Transition, at: number): Command | undefined => {
  if (t.state === "requested") {
    if (command !== undefined || !CommandKind.isKindName(t.kind)) return command
    return {
      id: t.command,
      tenant,
      kind: t.kind,
      state: "pending",
      payload: t.payload,
      requestedBy: t.requestedBy,
      idempotencyKey: t.idempotencyKey,
      fingerprint: t.fingerprint,
      marker: t.marker,
      attempts: 0,
      entityId: undefined,
      lastAnswer: undefined,
      reason: undefined,
      evidence: undefined,
      confirmedBy: undefined,
      seen: undefined,
      requestedAt: at,
      updatedAt: at
    }
  }
  if (command === undefined) return undefined
  // A final command moves only by the look for its effect (seen, notSeen): with several servers
  // a late record (a dead server's outbox relayed when it comes back) must not reopen it.
  if (EngineRecordCommands.isFinal(command.state) && t.state !== "seen" && t.state !== "notSeen") return command
  return {
    ...command,
    state: EngineRecordCommands.stateAfter(t),
    attempts: "attempt" in t && t.attempt !== undefined ? Math.max(command.attempts, t.attempt) : command.attempts,
    entityId: "entityId" in t && t.entityId !== undefined ? t.entityId : command.entityId,
    lastAnswer: t.state === "answered" ? t.body : command.lastAnswer,
    reason: "reason" in t ? t.reason : command.reason,
    evidence: "evidence" in t && t.evidence !== undefined ? t.evidence : command.evidence,
    confirmedBy: t.state === "confirmed" ? t.by : command.confirmedBy,
    seen: t.state === "seen" ? t.by : t.state === "notSeen" ? "flagged" : command.seen,
    updatedAt: at
  }
}

/** The record of one transition. */
export const record = (tenant: Ids.TenantRef, t: Transition, receivedAt: number): LogRecord.NewRecord => ({
  appId: tenant.appId,
  businessId: tenant.businessId,
  source: "system",
  type: EngineRecordCommands.COMMAND_TYPE,
  receivedAt,
  body: EngineRecordCommands.encode(t),
  dedupeKey: EngineRecordCommands.dedupeKey(Ids.tenantKey(tenant), t),
  meta: EngineRecordCommands.meta(t),
  entityId: t.command
})

/** Appends one transition, durably; answers whether it was new and the offset of the record that holds it. */
export const append = (tenant: Ids.TenantRef, t: Transition) => Effect.map(appendAll(tenant, [t]), ({ at, results }) => ({ result: results[0]!, at }))

/**
 * Appends transitions of one command that follow each other with nothing between (an answer and
 * its confirmation) in one call: one commit, all or none. Untraced: it runs several times per
 * command on the write path's hot loop.
 */
export const appendAll = Effect.fnUntraced(function*(tenant: Ids.TenantRef, ts: ReadonlyArray<Transition>) {
  const log = yield* EventLog.EventLog
  const now = yield* Clock.currentTimeMillis
  const results = yield* log.append(ts.map((t) => record(tenant, t, now)))
  return { results, at: now }
})

/** Appends transitions of one command in one commit (see `appendAll`), as of the time it answers with. */
export type Appender = (
  tenant: Ids.TenantRef,
  ts: ReadonlyArray<Transition>
) => Effect.Effect<{ readonly results: ReadonlyArray<LogRecord.AppendResult>; readonly at: number }, EventLogError.EventLogError>

/**
 * `appendAll` bound to the log once, for the engine's hot loop (three appends a command): the
 * log's own `DirectAppend` when the context has one (both logs provide it beside `EventLog`),
 * which hands the records to the group commit from the calling fiber and resumes it from the
 * commit's callback, with no effect, fiber or span of its own per append; else `EventLog.append`.
 * Same guarantee either way: the effect succeeds once the commit holding the records is durable.
 */
export const appender = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  const direct = yield* Effect.serviceOption(DirectAppend.DirectAppend)
  const append = Option.match(direct, {
    onNone: () => log.append,
    onSome: (d) => (records: ReadonlyArray<LogRecord.NewRecord>) =>
      Effect.callback<ReadonlyArray<LogRecord.AppendResult>, EventLogError.EventLogError>((resume) => d.append(records, resume))
  })
  const appendTransitions: Appender = (tenant, ts) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const records = ts.map((t) => record(tenant, t, now))
      return Effect.map(append(records), (results) => ({ results, at: now }))
    })
  return appendTransitions
})

/** The transition a log record holds, if it is one. */
export const transitionOf = (r: LogRecord.LogRecord): Option.Option<Transition> =>
  r.type === EngineRecordCommands.COMMAND_TYPE && r.businessId !== null ? EngineRecordCommands.decodeText(r.body) : Option.none()

/** The transition held at one offset (the winner of a request that lost to a duplicate). */
export const at = Effect.fn("CommandLedger.at")(function*(offset: number) {
  const log = yield* EventLog.EventLog
  const found = yield* Stream.runHead(log.read({ tenant: "all", from: offset, untilOffset: offset }))
  return Option.flatMap(found, transitionOf)
})

/**
 * Every command the log holds, folded (a start's resume, a replay). `seen` is told each command
 * record (where a shared engine's follower starts, `internal/sharedLedger.ts`).
 */
export const load = Effect.fn("CommandLedger.load")(function*(seen?: (r: LogRecord.LogRecord) => void) {
  const log = yield* EventLog.EventLog
  const commands = new Map<string, Command>()
  // The first request of a tenant's key is the command; a later one (another server's, racing)
  // was answered with the first and is never sent.
  const keys = new Set<string>()
  yield* log.read({ tenant: "all", types: [EngineRecordCommands.COMMAND_TYPE] }).pipe(
    Stream.runForEach((r) =>
      Effect.sync(() => {
        seen?.(r)
        const t = transitionOf(r)
        if (Option.isNone(t) || r.businessId === null) return
        if (t.value.state === "requested") {
          const key = `${Ids.tenantKey({ appId: r.appId, businessId: r.businessId })}\u0000${t.value.idempotencyKey}`
          if (keys.has(key)) return
          keys.add(key)
        }
        const next = step(commands.get(t.value.command), { appId: r.appId, businessId: r.businessId }, t.value, r.receivedAt)
        if (next !== undefined) commands.set(next.id, next)
      })
    )
  )
  return commands
})
