/**
 * Bodies as the console shows them (commands.ts): a JSON text indented token for token, so an
 * exact body stays exact (numbers keep their digits, strings their escapes), and every field
 * whose name says it holds a secret (token, secret, password...) shown as "(hidden)". No DOM
 * here: the console suite checks these functions directly.
 */

const SECRET = /token|secret|password|passwd|authorization|signature|api[-_]?key|private/i
const HIDDEN = "(hidden)"

/** A value with every field whose name says it is a secret replaced by "(hidden)". */
export const redact = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(redact)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET.test(k) && (typeof v !== "object" || v === null) ? HIDDEN : redact(v)]))
    : value

/**
 * A JSON text indented two spaces a level, token for token (numbers keep their digits, strings
 * their escapes: nothing is parsed into values), a secret field's scalar value hidden. A text
 * that is not JSON is returned as it is, with `token=...`-like pairs hidden.
 */
export const indent = (text: string): string => {
  const tokens: Array<string> = []
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === " " || c === "\n" || c === "\r" || c === "\t") {
      i++
    } else if (c === "\"") {
      let j = i + 1
      while (j < text.length && text[j] !== "\"") j += text[j] === "\\" ? 2 : 1
      if (j >= text.length) return plain(text)
      tokens.push(text.slice(i, j + 1))
      i = j + 1
    } else if ("{}[],:".includes(c)) {
      tokens.push(c)
      i++
    } else {
      let j = i
      while (j < text.length && !" \n\r\t{}[],:\"".includes(text[j]!)) j++
      const word = text.slice(i, j)
      if (!/^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)$/.test(word)) return plain(text)
      tokens.push(word)
      i = j
    }
  }
  if (tokens.length === 0 || !(tokens[0] === "{" || tokens[0] === "[" || tokens.length === 1)) return plain(text)
  let out = ""
  let depth = 0
  const pad = () => "\n" + "  ".repeat(depth)
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!
    const next = tokens[k + 1]
    if (t === "{" || t === "[") {
      const close = t === "{" ? "}" : "]"
      if (next === close) {
        out += t + close
        k++
      } else {
        depth++
        out += t + pad()
      }
    } else if (t === "}" || t === "]") {
      depth = Math.max(0, depth - 1)
      out += pad() + t
    } else if (t === ",") {
      out += "," + pad()
    } else if (t === ":") {
      out += ": "
      const key = tokens[k - 1] ?? ""
      const value = tokens[k + 1]
      if (SECRET.test(key) && value !== undefined && value !== "{" && value !== "[") {
        out += JSON.stringify(HIDDEN)
        k++
      }
    } else {
      out += t
    }
  }
  return out
}

const plain = (text: string) => text.replace(/((?:token|secret|password|signature)[\w-]*["']?\s*[:=]\s*["']?)[^"'&\s,;}]+/gi, `$1${HIDDEN}`)

/** A body to show: a text indented as it is, a value (a payload) redacted then written out. */
export const pretty = (body: unknown): string =>
  typeof body === "string" ? indent(body) : JSON.stringify(redact(body), null, 2) ?? String(body)
