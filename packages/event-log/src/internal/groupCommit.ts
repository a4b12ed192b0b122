/**
 * Group commit, on the main thread and in plain callbacks (an append from a request listener
 * costs no fiber): appends are checked and completed here, gathered, and handed to the writer
 * thread as one transaction; each caller is answered once that transaction committed.
 */
import { Ids } from "@ocs/protocol"
import * as Json from "@ocs/protocol/Json"
import { Deferred, Effect, Exit, Result, type Scope } from "effect"
import { EventLogClosed, type EventLogError, InvalidRecord } from "../EventLogError.ts"
import { type AppendResult, checkNewRecord, type NewRecord, uuidv7 } from "../LogRecord.ts"
import type { Outcomes, Row } from "./writer.worker.ts"
import type { Writer } from "./writerThread.ts"

export type Done = (exit: Exit.Exit<ReadonlyArray<AppendResult>, EventLogError>) => void

export interface GroupCommit {
  /**
   * Appends a batch as of `now`: `done` gets the results once the transaction holding it
   * committed, or the reason it was refused (an invalid record, the log closed, the writer
   * gone). Never throws.
   */
  readonly append: (batch: ReadonlyArray<NewRecord>, now: number, done: Done) => void
  /** Completes at the next commit (or never): subscribers and the Kafka relay wait on it. */
  readonly nextCommit: () => Deferred.Deferred<void>
}

export interface Options {
  readonly filename: string
  readonly writer: Writer
  /** The time a transaction is stamped with (the dedupe window is measured from it). */
  readonly now: () => number
  /** Extra time to wait after the first pending append before committing. 0: none. */
  readonly commitWindowMillis: number
  readonly maxRecordsPerCommit: number
}

interface Pending {
  readonly rows: ReadonlyArray<Row>
  readonly done: Done
}

/**
 * Transactions sent to the writer thread and not yet answered, at most: with two, the writer
 * commits one while this thread gathers the next, and neither waits for the other.
 */
const MAX_IN_FLIGHT = 2

/** The results of the append call whose rows start at `start` in the batch. */
const toResults = (rows: ReadonlyArray<Row>, outcomes: Outcomes, start: number) =>
  rows.map((row, i): AppendResult => {
    const offset = outcomes.offsets[start + i]!
    return offset > 0
      ? { _tag: "Appended", offset, id: row.id }
      : { _tag: "Duplicate", offset: -offset, id: outcomes.duplicateIds?.[start + i] ?? "" }
  })

const entityIdOf = (record: NewRecord): string | null => {
  if (record.entityId !== undefined) return record.entityId
  const fromMeta = record.meta?.["entityId"]
  if (typeof fromMeta === "string") return fromMeta
  if (typeof fromMeta === "number" || typeof fromMeta === "bigint") return String(fromMeta)
  return null
}

/** Checks and completes the records (ids, receivedAt), or says which record and field is invalid. */
const toRows = (batch: ReadonlyArray<NewRecord>, now: number): Result.Result<Array<Row>, InvalidRecord> => {
  const rows: Array<Row> = []
  for (let i = 0; i < batch.length; i++) {
    const r = batch[i]!
    const problem = checkNewRecord(r)
    if (problem !== undefined) return Result.fail(new InvalidRecord({ index: i, message: `record ${i}: ${problem}` }))
    rows.push({
      id: r.id ?? uuidv7(now),
      idGiven: r.id !== undefined,
      tenant: Ids.tenantKey(r),
      appId: r.appId,
      businessId: r.businessId,
      source: r.source,
      type: r.type,
      receivedAt: r.receivedAt ?? now,
      body: r.body,
      dedupeKey: r.dedupeKey ?? null,
      meta: r.meta === undefined ? "{}" : Json.stringify(r.meta),
      entityId: entityIdOf(r)
    })
  }
  return Result.succeed(rows)
}

export const make = (options: Options): Effect.Effect<GroupCommit, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { writer, commitWindowMillis, maxRecordsPerCommit } = options
    let signal = Deferred.makeUnsafe<void>()
    const notify = () => {
      const previous = signal
      signal = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(previous, Effect.void)
    }

    // The appends that arrive in one turn of the event loop (or within commitWindowMillis)
    // form one transaction, up to maxRecordsPerCommit records.
    let pending: Array<Pending> = []
    let inFlight = 0
    let scheduled = false
    let closed = false

    const flush = () => {
      scheduled = false
      if (closed || pending.length === 0) return
      let count = 0
      let take = 0
      while (take < pending.length && (take === 0 || count + pending[take]!.rows.length <= maxRecordsPerCommit)) {
        count += pending[take]!.rows.length
        take++
      }
      const group = take === pending.length ? pending : pending.slice(0, take)
      pending = take === pending.length ? [] : pending.slice(take)
      inFlight++
      writer.write(options.now(), group.map((p) => p.rows), (written) => {
        inFlight--
        if (Result.isFailure(written)) {
          for (const p of group) p.done(Exit.fail(written.failure))
        } else {
          const outcomes = written.success
          let start = 0
          group.forEach((p, i) => {
            const error = outcomes.errors?.[i] ??
              (start + p.rows.length > outcomes.offsets.length ? "the writer thread answered no result" : null)
            p.done(error !== null ? Exit.fail(writer.error(error)) : Exit.succeed(toResults(p.rows, outcomes, start)))
            start += p.rows.length
          })
        }
        notify()
        schedule()
      })
      schedule()
    }

    const schedule = () => {
      if (scheduled || closed || inFlight >= MAX_IN_FLIGHT || pending.length === 0) return
      scheduled = true
      if (commitWindowMillis > 0) setTimeout(flush, commitWindowMillis)
      else setImmediate(flush)
    }

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closed = true
        const left = pending
        pending = []
        for (const p of left) {
          p.done(Exit.fail(new EventLogClosed({ message: `event log ${options.filename} closed before the append was written` })))
        }
      })
    )

    const append = (batch: ReadonlyArray<NewRecord>, now: number, done: Done): void => {
      if (batch.length === 0) return done(Exit.succeed([]))
      if (closed) return done(Exit.fail(new EventLogClosed({ message: `event log ${options.filename} is closed` })))
      let rows: Result.Result<Array<Row>, InvalidRecord>
      try {
        rows = toRows(batch, now)
      } catch (cause) {
        // A meta that cannot be written (a cycle, a throwing getter): a defect, still an answer.
        return done(Exit.die(cause))
      }
      if (Result.isFailure(rows)) return done(Exit.fail(rows.failure))
      pending.push({ rows: rows.success, done })
      schedule()
    }

    return { append, nextCommit: () => signal }
  })
