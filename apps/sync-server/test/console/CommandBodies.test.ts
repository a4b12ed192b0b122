/**
 * How the commands page shows bodies (console/src/bodies.ts): an answer's exact text indented
 * token for token (what the service wrote stays what it wrote), and no secret on the page.
 */
import { assert, describe, it } from "vitest"
import { indent, pretty, redact } from "../../console/src/bodies.ts"

describe("command bodies on the console", () => {
  it("indents an answer without changing a token: big ids, decimals, escapes, empty containers", () => {
    const text = `{"code":1,"data":{"id":12345678901234567890,"price":1.50,"name":"Nón \\"lá\\" {x}, [y]","tags":[],"meta":{},"ok":true,"none":null}}`
    const shown = indent(text)
    assert.strictEqual(shown, [
      "{",
      `  "code": 1,`,
      `  "data": {`,
      `    "id": 12345678901234567890,`,
      `    "price": 1.50,`,
      `    "name": "Nón \\"lá\\" {x}, [y]",`,
      `    "tags": [],`,
      `    "meta": {},`,
      `    "ok": true,`,
      `    "none": null`,
      "  }",
      "}"
    ].join("\n"))
    // The same tokens: without the layout, the text is the answer's.
    assert.strictEqual(shown.replace(/\n\s*/g, "").replace(/": /g, `":`), text)
    assert.strictEqual(indent(`[{"appProductId":"A-1","id":100301}]`), `[\n  {\n    "appProductId": "A-1",\n    "id": 100301\n  }\n]`)
  })

  it("hides every field named as a secret, at any depth, and leaves other text alone", () => {
    const text = `{"accessToken":"tok-123","data":{"secretKey":"s-456","depot":{"password":"p"},"verifyToken":7,"idempotencyKey":"k-1"},"list":[{"Authorization":"Bearer x"}]}`
    const shown = indent(text)
    for (const secret of ["tok-123", "s-456", `"p"`, "Bearer x", ": 7"]) assert.notInclude(shown, secret)
    assert.strictEqual((shown.match(/\(hidden\)/g) ?? []).length, 5)
    assert.include(shown, `"idempotencyKey": "k-1"`, "a key that names no secret")
    assert.deepStrictEqual(redact({ name: "a", accessToken: "t", nested: [{ secret_key: "s", id: 1 }] }), { name: "a", accessToken: "(hidden)", nested: [{ secret_key: "(hidden)", id: 1 }] })
    assert.strictEqual(pretty({ accessToken: "t" }), `{\n  "accessToken": "(hidden)"\n}`)
    // A body that is not JSON (a proxy's page, a form) is shown as it is, its secrets hidden.
    assert.strictEqual(indent("<html>bad gateway</html>"), "<html>bad gateway</html>")
    assert.strictEqual(indent("access_token=abc123&businessId=5"), "access_token=(hidden)&businessId=5")
    assert.strictEqual(indent(`{"unterminated": "x`), `{"unterminated": "x`)
  })
})
