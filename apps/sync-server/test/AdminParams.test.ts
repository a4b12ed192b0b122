import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { queryBool, queryCode, queryDay, queryId, queryMillis } from "../src/http/admin/AdminHttp.ts"

const params = (query: string) => new URLSearchParams(query)

/** The status the route answers when the parameter is refused (a response, never a defect). */
const refused = <A>(effect: Effect.Effect<A, HttpServerResponse.HttpServerResponse>) =>
  Effect.map(Effect.flip(effect), (response) => {
    assert.isTrue(HttpServerResponse.isHttpServerResponse(response))
    return response.status
  })

describe("admin read-model parameters", () => {
  it.effect("ids are positive integers in canonical form", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* queryId(params("depotId=42"), "depotId"), "42")
      assert.strictEqual(yield* queryId(params("depotId=9007199254740993123"), "depotId"), "9007199254740993123")
      assert.isUndefined(yield* queryId(params(""), "depotId"))
      for (const bad of ["0", "0042", "-1", "1.5", "abc", "", "9".repeat(41)]) {
        assert.strictEqual(yield* refused(queryId(params(`depotId=${bad}`), "depotId")), 400, bad)
      }
    }))

  it.effect("codes are digits, dates are real days, booleans are true or false, times are bounded", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* queryCode(params("status=054"), "status"), "54")
      assert.strictEqual(yield* refused(queryCode(params("status=new"), "status")), 400)
      assert.strictEqual(yield* refused(queryCode(params("status=1234567890"), "status")), 400)
      assert.strictEqual(yield* queryDay(params("fromDate=2024-02-29"), "fromDate"), "2024-02-29")
      for (const bad of ["2023-02-29", "2024-13-01", "2024-1-1", "yesterday"]) {
        assert.strictEqual(yield* refused(queryDay(params(`fromDate=${bad}`), "fromDate")), 400, bad)
      }
      assert.isTrue(yield* queryBool(params("includeDeleted=true"), "includeDeleted"))
      assert.strictEqual(yield* refused(queryBool(params("includeDeleted=1"), "includeDeleted")), 400)
      assert.strictEqual(yield* queryMillis(params("createdFromMs=1714557600000"), "createdFromMs"), 1714557600000)
      for (const bad of ["-1", "1e12", "99999999999999999"]) {
        assert.strictEqual(yield* refused(queryMillis(params(`createdFromMs=${bad}`), "createdFromMs")), 400, bad)
      }
    }))
})
