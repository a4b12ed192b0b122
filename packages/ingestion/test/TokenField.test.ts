/**
 * The top-level token scanner against JSON.parse: same answer on any JSON object, nested keys
 * never taken, no crash on malformed input, work proportional to the input.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as TokenField from "../src/internal/tokenField.ts"

const utf8 = (s: string) => Buffer.from(s, "utf8")
const FIELD = TokenField.TOKEN_FIELD

/** What JSON.parse says the top-level token is (the last duplicate wins there). */
const parsedToken = (text: string): { present: boolean; token: unknown } => {
  const v = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as unknown
  if (typeof v !== "object" || v === null || Array.isArray(v)) return { present: false, token: undefined }
  return Object.hasOwn(v, FIELD) ? { present: true, token: (v as Record<string, unknown>)[FIELD] } : { present: false, token: undefined }
}

/** JSON text of an object, with optional whitespace, escaped key spellings and a BOM. */
const spacing = fc.constantFrom("", " ", "\n", "\t ", "\r\n  ")
const escapeKey = (key: string, mode: number) =>
  mode === 0 ? JSON.stringify(key) : `"${[...key].map((c, i) => (i % mode === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}` : c)).join("")}"`

const objectText = fc.record({
  members: fc.array(fc.tuple(fc.oneof(fc.string({ maxLength: 8 }), fc.constant(FIELD)), fc.jsonValue({ maxDepth: 3 })), { maxLength: 6 }),
  token: fc.option(fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "grapheme", maxLength: 20 }), fc.jsonValue({ maxDepth: 2 })), { nil: undefined }),
  at: fc.nat(),
  space: spacing,
  keyMode: fc.constantFrom(0, 0, 0, 1, 3),
  bom: fc.boolean()
}).map(({ members, token, at, space, keyMode, bom }) => {
  // Nested token fields everywhere a value can hold one: they must never be taken.
  const nested = members.map(([k, v]) => [k === FIELD ? `${k}_` : k, { [FIELD]: "nested", v }] as const)
  const parts = nested.map(([k, v]) => `${space}${JSON.stringify(k)}${space}:${space}${JSON.stringify(v)}`)
  if (token !== undefined) parts.splice(at % (parts.length + 1), 0, `${space}${escapeKey(FIELD, keyMode)}${space}:${space}${JSON.stringify(token)}`)
  return `${bom ? "\uFEFF" : ""}${space}{${parts.join(",")}${space}}${space}`
})

describe("tokenField.scan", () => {
  it("finds exactly the top-level token JSON.parse finds, and its exact byte range", () =>
    fc.assert(fc.property(objectText, (text) => {
      const bytes = utf8(text)
      const expected = parsedToken(text)
      const found = TokenField.scan(bytes)
      if (!expected.present) return found._tag === "Absent"
      if (found._tag !== "Found") return false
      // The range is the value's JSON text, so redacting it leaves valid JSON with the marker.
      const value = JSON.parse(bytes.subarray(found.valueStart, found.valueEnd).toString("utf8")) as unknown
      assert.deepStrictEqual(value, expected.token)
      assert.strictEqual(found.token, typeof expected.token === "string" ? expected.token : undefined)
      const redacted = Buffer.from(TokenField.redact(bytes, found.valueStart, found.valueEnd)).toString("utf8")
      assert.strictEqual(parsedToken(redacted).token, "[redacted]")
      assert.strictEqual(TokenField.scan(bytes, found.next)._tag, "Absent", "no second top-level token")
      return true
    }), { numRuns: 3000 }))

  it("reports a second top-level occurrence; JSON.parse would take the last", () => {
    const text = `{"${FIELD}":"first","a":{"${FIELD}":"nested"},"${FIELD}":"second"}`
    const first = TokenField.scan(utf8(text))
    assert.strictEqual(first._tag === "Found" ? first.token : undefined, "first")
    const second = first._tag === "Found" ? TokenField.scan(utf8(text), first.next) : first
    assert.strictEqual(second._tag === "Found" ? second.token : undefined, "second")
    assert.strictEqual(parsedToken(text).token, "second")
  })

  it("never takes a nested or look-alike key, and tells non-objects from garbage", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      [`{"data":{"${FIELD}":"x"}}`, "Absent"],
      [`{"data":["${FIELD}",{"${FIELD}":"x"}]}`, "Absent"],
      [`{"s":"\\"${FIELD}\\":\\"x\\"","${FIELD}x":"y"}`, "Absent"],
      [`{"a":"\\\\","${FIELD}":"t"}`, "Found"],
      [`[{"${FIELD}":"x"}]`, "NotObject"],
      [`"${FIELD}"`, "NotObject"],
      [`12`, "NotObject"],
      [``, "Malformed"],
      [`   `, "Malformed"],
      [`garbage`, "Malformed"],
      [`{"a":1,}`, "Malformed"],
      [`{"a" 1}`, "Malformed"],
      [`{"a":"unterminated`, "Malformed"],
      [`{"a":{"b":[1,2}`, "Malformed"]
    ]
    for (const [text, tag] of cases) assert.strictEqual(TokenField.scan(utf8(text))._tag, tag, text)
  })

  it("decodes escapes in the token and refuses invalid UTF-8 or overlong tokens as no token", () => {
    const escaped = TokenField.scan(utf8(`{"${FIELD}":"a\\"b\\\\c\\u00e9\\ud83d\\ude00"}`))
    assert.strictEqual(escaped._tag === "Found" ? escaped.token : null, "a\"b\\cé😀")
    const invalid = TokenField.scan(Buffer.concat([utf8(`{"${FIELD}":"a`), Buffer.from([0xc3, 0x28]), utf8(`"}`)]))
    assert.deepStrictEqual(invalid._tag === "Found" ? invalid.token : null, undefined)
    const long = TokenField.scan(utf8(`{"${FIELD}":"${"x".repeat(TokenField.MAX_TOKEN_BYTES + 1)}"}`))
    assert.deepStrictEqual(long._tag === "Found" ? long.token : null, undefined)
    const number = TokenField.scan(utf8(`{"${FIELD}":12}`))
    assert.deepStrictEqual(number._tag === "Found" ? [number.token, number.valueStart, number.valueEnd] : null, [undefined, 23, 25])
  })

  it("never throws on malformed input, whatever the bytes", () =>
    fc.assert(fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 300 }),
        objectText.chain((t) => fc.nat({ max: t.length }).map((n) => new Uint8Array(utf8(t).subarray(0, n)))),
        fc.array(fc.constantFrom(...`{}[]":,\\ ${FIELD}1a`.split("")), { maxLength: 200 }).map((cs) => new Uint8Array(utf8(cs.join(""))))
      ),
      (bytes) => {
        const first = TokenField.scan(bytes)
        if (first._tag === "Found") {
          assert.isAtMost(first.valueEnd, bytes.length)
          TokenField.scan(bytes, first.next)
        }
        return true
      }
    ), { numRuns: 5000 }))

  it("does work proportional to the input: 8 MiB of nesting, strings and escapes in tens of ms", () => {
    const chunk = `{"a":[1,"x\\"y",{"${FIELD}":"n"},[[[]]]],"b":"${"z".repeat(200)}"},`
    const body = utf8(`{"data":[${chunk.repeat(Math.floor((8 << 20) / chunk.length))}1],"${FIELD}":"last"}`)
    const started = performance.now()
    const found = TokenField.scan(body)
    const millis = performance.now() - started
    assert.strictEqual(found._tag === "Found" ? found.token : null, "last")
    // Linear: a JSON.parse of the same text takes longer; a quadratic walk would take minutes.
    assert.isBelow(millis, 1000)
  })
})
