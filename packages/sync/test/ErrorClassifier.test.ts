import { assert, describe, it } from "@effect/vitest"
import { ApiError } from "@ocs/protocol"
import { ErrorClassifier } from "@ocs/sync"

describe("ErrorClassifier", () => {
  it("what needs a person holds the tenant, what concerns one resource pauses it, anything else is retried", () => {
    assert.deepStrictEqual(ErrorClassifier.classify({ _tag: "InvalidAccessToken", message: "token expired", errorCode: "ERR_INVALID_ACCESS_TOKEN" } as ErrorClassifier.Failure), {
      _tag: "HoldTenant",
      code: "ERR_INVALID_ACCESS_TOKEN",
      message: "token expired"
    })
    assert.strictEqual(ErrorClassifier.classify({ _tag: "Forbidden", message: "no permission" })._tag, "PauseResource")
    assert.strictEqual(ErrorClassifier.classify({ _tag: "InvalidDepotId" })._tag, "PauseResource")
    assert.strictEqual(ErrorClassifier.classify({ _tag: "RequestTimeout", message: "slow" })._tag, "Retry")
  })

  it("a refused cursor restarts the full sync; other invalid fields are retried", () => {
    assert.strictEqual(ErrorClassifier.classify({ _tag: "InvalidFormFields", fields: { "paginator.next": "bad" } } as ErrorClassifier.Failure)._tag, "RestartFullSync")
    assert.strictEqual(ErrorClassifier.classify({ _tag: "InvalidFormFields", fields: { "filters.name": "bad" } } as ErrorClassifier.Failure)._tag, "Retry")
  })

  it("keeps the errorCode of the API's own errors for the person who acts on it", () => {
    const error = new ApiError.Forbidden({ errorCode: "ERR_403", message: "the app lacks the permission to read bills" })
    assert.deepStrictEqual(ErrorClassifier.classify(error), { _tag: "PauseResource", code: "ERR_403", message: "the app lacks the permission to read bills" })
    assert.deepStrictEqual(ErrorClassifier.classify(new ApiError.InvalidVersion({ errorCode: "ERR_INVALID_VERSION", message: "v" })), { _tag: "HoldTenant", code: "ERR_INVALID_VERSION", message: "v" })
  })
})
