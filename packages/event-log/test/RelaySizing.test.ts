/**
 * The relay's request sizes are upper bounds of what goes on the wire: a batch it sizes under the
 * broker's limit is never larger once kafkajs encodes it (record batch format v2, uncompressed),
 * whatever the keys, values, headers, offsets and timestamps.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { createRequire } from "node:module"
import { BATCH_OVERHEAD_BYTES, messageBytes, type OutgoingMessage } from "../src/internal/relaySizing.ts"

// kafkajs's own encoders of a record and a record batch (the ones its producer uses).
const require = createRequire(import.meta.url)
const encodeRecord = require("kafkajs/src/protocol/recordBatch/record/v0") as (record: {
  offsetDelta: number
  timestampDelta: number
  key: Buffer
  value: Buffer
  headers: Record<string, string>
}) => unknown
const { RecordBatch: encodeBatch } = require("kafkajs/src/protocol/recordBatch/v0") as { RecordBatch: (batch: {
  firstTimestamp: number
  maxTimestamp: number
  lastOffsetDelta: number
  records: ReadonlyArray<unknown>
}) => Promise<{ readonly buffer: Buffer }> }

const text = fc.string({ unit: "binary", maxLength: 3000 })
const message: fc.Arbitrary<OutgoingMessage> = fc.record({
  key: fc.string({ unit: "binary", maxLength: 60 }),
  value: text,
  headers: fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), fc.string({ unit: "binary", maxLength: 60 }), { maxKeys: 3 })
})

describe("relay sizing", () => {
  it("counts every record batch at least as large as kafkajs encodes it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 40 }), fc.nat({ max: 3_600_000 }), async (messages, spread) => {
        const first = 1_795_000_000_000
        const records = messages.map((m, i) =>
          encodeRecord({
            offsetDelta: i,
            timestampDelta: Math.round((spread * i) / messages.length),
            key: Buffer.from(m.key),
            value: Buffer.from(m.value),
            headers: m.headers
          })
        )
        const { buffer } = await encodeBatch({ firstTimestamp: first, maxTimestamp: first + spread, lastOffsetDelta: messages.length - 1, records })
        const counted = BATCH_OVERHEAD_BYTES + messages.reduce((n, m) => n + messageBytes(m), 0)
        assert.isAtMost(buffer.length, counted)
        // Upper bounds, yet close: only the varints counted at their widest make the difference.
        const varintSlack = messages.reduce((n, m) => n + 36 + 10 * Object.keys(m.headers).length, 0)
        assert.isAtLeast(buffer.length, counted - varintSlack)
      }),
      { numRuns: 200 }
    )
  })
})
