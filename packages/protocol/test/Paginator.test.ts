import { assert, describe, it } from "@effect/vitest"
import { Option, Result } from "effect"
import fc from "fast-check"
import { Json, Operation, Paginator } from "@ocs/protocol"
import { cursorText } from "./arbitraries.ts"

const response = (next: string | undefined, data = "[]") =>
  next === undefined ? `{"code":1,"data":${data},"paginator":{}}` : `{"code":1,"data":${data},"paginator":{"next":${next}}}`

describe("Paginator cursor", () => {
  it("spec Paginator rule 2: any cursor goes back byte for byte (decode then encode is identical)", () => {
    fc.assert(
      fc.property(cursorText, (text) => {
        const cursor = Option.getOrThrow(Paginator.nextCursor(response(text)))
        const body = Operation.body({ filters: { name: "x" }, paginator: Paginator.toRequest({ size: 100, next: cursor }) })
        return cursor.text === text.trim() && body === `{"filters":{"name":"x"},"paginator":{"size":100,"next":${text.trim()}}}`
      }),
      { numRuns: 1000 }
    )
  })

  it("keeps an object an object, key order and big numbers included", () => {
    const text = '{"2":{"lastId":9007199254740993},"a":[1.50,"x"],"1":null}'
    const cursor = Option.getOrThrow(Paginator.nextCursor(response(text)))
    assert.strictEqual(cursor.text, text)
    // A plain JSON.parse + JSON.stringify would reorder "1","2" first and round the id:
    assert.notStrictEqual(JSON.stringify(JSON.parse(text)), text)
  })

  it("spec Paginator rule 4: absent or null next ends", () => {
    assert.isTrue(Option.isNone(Paginator.nextCursor(response(undefined))))
    assert.isTrue(Option.isNone(Paginator.nextCursor(response("null"))))
    assert.isTrue(Option.isNone(Paginator.nextCursor('{"code":1,"data":[]}')))
    assert.isTrue(Option.isSome(Paginator.nextCursor(response("{}"))))
    assert.isTrue(Option.isSome(Paginator.nextCursor(response('""'))))
  })

  it("spec Paginator rule 5: a short (even empty) page with next is not the last", () => {
    const page: Paginator.Page<unknown> = {
      records: [],
      cursor: Option.none(),
      next: Paginator.nextCursor(response('["k", 5]')),
      size: 100,
      text: ""
    }
    assert.isFalse(Paginator.isLast(page))
    assert.isTrue(Paginator.isLast({ ...page, records: Array.from({ length: 100 }, () => 0), next: Option.none() }))
  })

  it("first page: next omitted in requests; '' or null on a request means the first page", () => {
    assert.deepStrictEqual(Paginator.toRequest({ size: 50 }), { size: 50 })
    assert.isTrue(Option.isNone(Paginator.requestedNext("")))
    assert.isTrue(Option.isNone(Paginator.requestedNext(undefined)))
    assert.isTrue(Option.isNone(Paginator.requestedNext(null)))
    assert.deepStrictEqual(Paginator.requestedNext({ a: 1 }), Option.some({ a: 1 }))
  })

  it("a persisted cursor is read back exactly, and garbage is refused", () => {
    fc.assert(
      fc.property(cursorText, (text) => {
        const back = Paginator.cursorFromText(text)
        return Result.isSuccess(back) && back.success.text === text.trim() && Json.stringify([back.success]) === `[${text.trim()}]`
      }),
      { numRuns: 300 }
    )
    assert.isTrue(Result.isFailure(Paginator.cursorFromText("{oops")))
  })
})
