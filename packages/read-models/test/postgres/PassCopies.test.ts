/**
 * The PostgreSQL copy in Kafka mode (docs/architecture.md §4.14, §4.34): a page's copy from
 * another server, not applied again, still counts for its own full pass, as in SQLite
 * (../PassCopies.test.ts): a completion deletes only what no page of its pass listed.
 */
import { assert, describe, it } from "@effect/vitest"
import { databaseOfFile, postgresUnavailable } from "@ocs/postgres-server/testing"
import type { LogRecord } from "@ocs/event-log"
import { PostgresStore } from "@ocs/read-models/postgres"
import { Effect } from "effect"
import { handedOverBetweenPages, PAGE, rerunFromPageOne } from "../passCopies.ts"

const database = databaseOfFile()
let schemas = 0

/** Projects the records into a fresh schema: the deletions found (the change outbox's). */
const deletions = (records: ReadonlyArray<LogRecord.LogRecord>) =>
  Effect.scoped(Effect.gen(function*() {
    const pg = yield* PostgresStore.make({ url: database(), schema: `pass_copies_${schemas++}`, pool: 2, detectChanges: true })
    yield* pg.project(records)
    const changes = yield* pg.changes
    return changes.reduce((n, row) => n + (row.body.match(/"change":"ProductDeleted"/g) ?? []).length, 0)
  }))

describe.skipIf(postgresUnavailable())("PostgreSQL: a full pass whose pages two servers appended", () => {
  it.live("a pass run again from page 1 deletes nothing; one handed over between pages deletes only what no page listed", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* deletions(rerunFromPageOne()), 0)
      assert.strictEqual(yield* deletions(handedOverBetweenPages()), PAGE)
    }), 60_000)
})
