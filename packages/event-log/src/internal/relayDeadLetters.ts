/**
 * The relay's dead letters in the outbox file (`relay_dead_letters`): outbox records the relay
 * did not put on the topic because the broker does not accept a record that large. The records
 * themselves stay in the outbox; a row here is the note of why one is missing from the topic.
 */
import { and, asc, count, eq, isNull } from "drizzle-orm"
import type { SqliteDatabase } from "@ocs/sqlite"
import { relayDeadLetters } from "../Tables.ts"

export interface DeadLetter {
  /** The record's outbox offset. */
  readonly offset: number
  readonly tenant: string
  readonly recordId: string
  readonly type: string
  readonly bytes: number
  readonly limitBytes: number
  readonly reason: string
  readonly refusedAt: number
  /** When a redrive put it on the topic; null while it waits. */
  readonly redrivenAt: number | null
}

export const make = (db: SqliteDatabase.Handle, topic: string) => ({
  /** Notes a refused record (kept once: a relay restarted before its cursor was saved refuses it again). */
  add: (letter: Omit<DeadLetter, "redrivenAt">) =>
    db.transaction("relay dead letter", (orm) =>
      orm.insert(relayDeadLetters).values({ ...letter, topic, redrivenAt: null }).onConflictDoNothing().run()
    ),
  /** The letters not redriven yet, in outbox order. */
  waiting: db.use("relay dead letters", (orm): ReadonlyArray<DeadLetter> =>
    orm.select({
      offset: relayDeadLetters.offset,
      tenant: relayDeadLetters.tenant,
      recordId: relayDeadLetters.recordId,
      type: relayDeadLetters.type,
      bytes: relayDeadLetters.bytes,
      limitBytes: relayDeadLetters.limitBytes,
      reason: relayDeadLetters.reason,
      refusedAt: relayDeadLetters.refusedAt,
      redrivenAt: relayDeadLetters.redrivenAt
    }).from(relayDeadLetters)
      .where(and(eq(relayDeadLetters.topic, topic), isNull(relayDeadLetters.redrivenAt)))
      .orderBy(asc(relayDeadLetters.offset)).all()
  ),
  countWaiting: db.use("relay dead letters", (orm) =>
    orm.select({ n: count() }).from(relayDeadLetters)
      .where(and(eq(relayDeadLetters.topic, topic), isNull(relayDeadLetters.redrivenAt))).get()?.n ?? 0
  ),
  /** Notes that a redrive put the record at `offset` on the topic. */
  redriven: (offset: number, at: number) =>
    db.transaction("relay dead letter", (orm) =>
      orm.update(relayDeadLetters).set({ redrivenAt: at }).where(eq(relayDeadLetters.offset, offset)).run()
    )
})
