/**
 * fast-check arbitraries for JSON *text* as a server might write it: any key order (including
 * integer-like keys, which JS objects would reorder), odd whitespace, number literals a
 * double cannot hold (big integers, trailing zeros, exponents), escapes and unicode.
 */
import fc from "fast-check"

const ws = fc.constantFrom("", "", "", " ", "\n", "\t", "  \r\n ")

export const numberLiteral = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.constantFrom("0", "-0", "1.50", "1e3", "2E-7", "9007199254740993", "18446744073709551615", "0.1000000000000000055511151231257827"),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d))
)

const stringLiteral = fc.oneof(
  fc.string().map((s) => JSON.stringify(s)),
  fc.constantFrom('"\\u00e9t\\u00e9"', '"caf\u00e9 \u{1F600}"', '"a\\"b\\\\c\\/d"', '""')
)

const keyLiteral = fc.oneof(
  fc.string({ maxLength: 8 }).map((s) => JSON.stringify(s)),
  fc.constantFrom('"2"', '"10"', '"1"', '"a"', '"id"', '"__proto__"', '"constructor"')
)

/** JSON text of a value, rendered with arbitrary whitespace. */
export const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    numberLiteral,
    stringLiteral,
    fc.constantFrom("true", "false", "null"),
    fc.tuple(ws, fc.array(fc.tuple(ws, tie("value"), ws), { maxLength: 4 }), ws).map(
      ([a, items, b]) => `[${a}${items.map(([x, v, y]) => `${x}${v}${y}`).join(",")}${items.length === 0 ? b : ""}]`
    ),
    fc.tuple(ws, fc.uniqueArray(fc.tuple(keyLiteral, ws, tie("value"), ws), { maxLength: 4, selector: ([k]) => k }), ws).map(
      ([a, members, b]) =>
        `{${a}${members.map(([k, x, v, y]) => `${k}${x}:${x}${v}${y}`).join(",")}${members.length === 0 ? b : ""}}`
    )
  )
})).value

/** A cursor as a server may send it: anything but null (null means "no more pages"). */
export const cursorText = jsonText.filter((t) => t.trim() !== "null")
