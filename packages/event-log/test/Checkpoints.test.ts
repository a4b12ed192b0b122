import { assert, describe, it } from "@effect/vitest"
import { Checkpoints } from "@ocs/event-log"
import * as fc from "fast-check"

const offset = fc.bigInt({ min: 0n, max: 2n ** 62n }).map(String)
const state = fc.dictionary(fc.nat({ max: 64 }).map(String), fc.record({
  next: offset,
  seen: fc.dictionary(fc.string({ minLength: 1, maxLength: 40 }), fc.nat())
}))

describe("Kafka checkpoints", () => {
  it("round-trip the next offsets and the origins' high-water marks", () => {
    fc.assert(fc.property(state, (entries) => {
      const next = new Map(Object.entries(entries).map(([p, e]) => [Number(p), e.next] as const))
      const seen = new Map(Object.entries(entries).map(([p, e]) => [Number(p), new Map(Object.entries(e.seen))] as const))
      const parsed = Checkpoints.parseKafkaState(Checkpoints.kafkaWithSeen(next, seen))
      assert.isDefined(parsed)
      assert.deepStrictEqual([...parsed!.next].sort(), [...next].sort())
      for (const [p, marks] of seen) {
        if (marks.size === 0) assert.isUndefined(parsed!.seen.get(p))
        else assert.deepStrictEqual(new Map([...parsed!.seen.get(p)!].sort()), new Map([...marks].sort()))
      }
    }))
  })

  it("read the checkpoints written before origins existed", () => {
    const parsed = Checkpoints.parseKafkaState(`kafka:{"0":"12","3":"4"}`)
    assert.deepStrictEqual(parsed, { next: new Map([[0, "12"], [3, "4"]]), seen: new Map() })
    assert.deepStrictEqual(Checkpoints.parseKafka(`kafka:{"1":{"next":"9","seen":{"o":3}}}`), new Map([[1, "9"]]))
  })

  it("refuse what is not a Kafka checkpoint", () => {
    for (const bad of ["sqlite:3", "kafka:[]", `kafka:{"x":"1"}`, `kafka:{"0":1}`, `kafka:{"0":{"next":"1"}}`, `kafka:{"0":{"next":"1","seen":{"o":-1}}}`]) {
      assert.isUndefined(Checkpoints.parseKafkaState(bad), bad)
    }
  })
})
