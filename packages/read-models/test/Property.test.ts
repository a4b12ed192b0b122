import { assert, describe, it } from "@effect/vitest"
import { EventLog, type LogRecord, SqliteEventLog } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import { Effect, Stream } from "effect"
import * as fc from "fast-check"
import * as NodePath from "node:path"
import { BIZ, OTHER_BIZ, bill, order, stockItem, syncPage, tempDir, webhook } from "./helpers.ts"

/**
 * Facts about a few entities. The conflict rule is a total order when, per entity, updatedAt is
 * either always present (deletes carry their receivedAt) or always absent (everything compares
 * by log position), so entity ids 1 and 3 always carry one and 2 and 4 never do; and when
 * receivedAt grows with log position, as it does when the log stamps records at append: a delete
 * without updatedAt carries its receivedAt, so two deletes of one entity compare by it, and a
 * receivedAt running against the log order would make a cycle with an update between them.
 */
const T0 = Date.UTC(2024, 0, 1)
const fact = fc.record({
  kind: fc.constantFrom("update", "page", "delete", "stock", "stockPage", "order", "orderPage", "orderDelete", "bill", "customer", "unknown"),
  biz: fc.constantFrom(BIZ, OTHER_BIZ),
  id: fc.integer({ min: 1, max: 4 }),
  minute: fc.integer({ min: 0, max: 5 }),
  n: fc.integer({ min: 0, max: 1000 })
})
type Fact = typeof fact extends fc.Arbitrary<infer A> ? A : never

const toRecord = (f: Fact, i: number): LogRecord.NewRecord => {
  const versioned = f.id % 2 === 1
  const updatedAt = versioned ? new Date(T0 + f.minute * 60_000).toISOString() : undefined
  // Received in log order, spread over the same minutes as the updatedAt values.
  const receivedAt = T0 + i * 15_000
  switch (f.kind) {
    case "update":
      return webhook(f.biz, "productUpdate", { id: 9007199254740993n + BigInt(f.id), name: `u${i}-${f.n}`, updatedAt }, receivedAt)
    case "page":
      return syncPage(f.biz, "product", [{ id: 9007199254740993n + BigInt(f.id), name: `p${i}-${f.n}`, updatedAt }, { id: 99, name: `x${f.n}`, updatedAt: versioned ? updatedAt : undefined }].slice(0, versioned ? 2 : 1), { receivedAt })
    case "delete":
      return webhook(f.biz, "productDelete", [9007199254740993n + BigInt(f.id)], receivedAt)
    case "stock":
      return webhook(f.biz, "inventoryChange", [{ ...stockItem(f.id, [[1, f.n], [2, i]], "id"), updatedAt }], receivedAt)
    case "stockPage":
      return syncPage(f.biz, "inventory", [{ ...stockItem(f.id, [[2, f.n]]), updatedAt }], { idField: "productId", receivedAt })
    case "order":
      // Lines differ per version, so a line left from another version shows in the digest.
      return webhook(f.biz, "orderUpdate", order(f.id, { status: f.n, updatedAt, lines: Array.from({ length: f.n % 4 }, (_, j) => ({ productId: j + 1, quantity: i, price: f.n })) }), receivedAt)
    case "orderPage":
      return syncPage(f.biz, "order", [order(f.id, { status: f.n, updatedAt, lines: [{ productId: 9, quantity: i, price: 1 }] })], { idField: "info.id", updatedAtField: "info.updatedAt", receivedAt })
    case "orderDelete":
      return webhook(f.biz, "orderDelete", [f.id], receivedAt)
    case "bill":
      return syncPage(f.biz, "bill", [bill(f.id, { amount: f.n, lines: Array.from({ length: f.n % 3 }, (_, j) => ({ id: j + 1, quantity: i, price: 1 })) })], { receivedAt })
    case "customer":
      return syncPage(f.biz, "customer", [{ id: f.id, name: `c${i}-${f.n}`, updatedAt }], { receivedAt })
    case "unknown":
      return webhook(f.biz, "notInTheSpec", { n: f.n }, receivedAt)
  }
}

/** Deliveries: every record at least once, some twice or more, in any order, in batches. */
const scenario = fc.array(fact, { minLength: 1, maxLength: 25 }).chain((facts) =>
  fc.record({
    facts: fc.constant(facts),
    order: fc.shuffledSubarray(facts.map((_, i) => i), { minLength: facts.length, maxLength: facts.length }),
    extra: fc.array(fc.nat({ max: facts.length - 1 }), { maxLength: 10 }),
    extraAt: fc.array(fc.nat(), { maxLength: 10 }),
    cuts: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 10 })
  }))

const digestOfDeliveries = (dir: string, name: string, batches: ReadonlyArray<ReadonlyArray<LogRecord.LogRecord>>) =>
  Effect.scoped(Effect.gen(function*() {
    const rm = yield* ReadModels.make({ filename: NodePath.join(dir, name) })
    for (const batch of batches) yield* rm.project(batch)
    return yield* rm.digest()
  }))

describe("property: projection is idempotent and independent of delivery order", () => {
  it.live("any interleaving and redelivery of the same records yields the digest of one pass in log order", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(scenario, ({ facts, order, extra, extraAt, cuts }) => {
          const dir = tempDir("read-models-prop-")
          return Effect.runPromise(Effect.gen(function*() {
            const log = yield* EventLog.EventLog
            yield* log.append(facts.map(toRecord))
            const records = [...(yield* Stream.runCollect(log.read({ tenant: "all" })))]
            const inLogOrder = yield* digestOfDeliveries(dir, "once.db", [records])

            const deliveries = order.map((i) => records[i]!)
            extra.forEach((i, k) => deliveries.splice((extraAt[k] ?? 0) % (deliveries.length + 1), 0, records[i]!))
            const batches: Array<Array<LogRecord.LogRecord>> = []
            for (let at = 0, c = 0; at < deliveries.length; c++) {
              const size = cuts[c % cuts.length]!
              batches.push(deliveries.slice(at, at + size))
              at += size
            }
            const shuffled = yield* digestOfDeliveries(dir, "shuffled.db", batches)
            assert.deepStrictEqual(shuffled, inLogOrder)
          }).pipe(Effect.provide(SqliteEventLog.layer({ filename: NodePath.join(dir, "log.db"), synchronous: "NORMAL" }))))
        }),
        { numRuns: 40 }
      )
    ), 60_000)
})
