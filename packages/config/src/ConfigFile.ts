/**
 * A configuration read the one way every setting deserves: a YAML or JSON file (optional) over
 * the defaults, then overrides, then environment variables `OCS_<PATH>` with `__` between
 * levels (`OCS_SERVER__PORT=9000`, `OCS_EVENT_LOG__KAFKA__BROKERS=a:9092,b:9092`; names matched
 * case-insensitively with underscores removed), decoded with the schema so that every bad field
 * is reported with its path, and every key the schema does not know refused with the nearest
 * known name (./StrictKeys.ts): a misspelt key never leaves its setting at the default in silence.
 */
import { Effect, Schema, SchemaAST } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Yaml from "yaml"
import * as StrictKeys from "./StrictKeys.ts"

export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  message: Schema.String
}) {}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Deep merge: objects merge, everything else replaces. */
export const merge = (base: unknown, over: unknown): unknown => {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over
  const out: Record<string, unknown> = { ...base }
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v)
  return out
}

const norm = (s: string) => s.toLowerCase().replaceAll("_", "")

/**
 * Applies `OCS_A__B=value` variables onto a raw config object (paths matched loosely). Only
 * variables whose first part names a top-level setting of `schema` are read (`OCS_SERVER__...`,
 * `OCS_ENCRYPTION_KEY`): other `OCS_` variables belong to the launcher, the tests or the heap
 * profile's re-execution. Below that first part a misspelt name is refused like one in a file.
 * A comma list becomes an array where the schema wants one; strings stay strings elsewhere.
 */
export const applyEnv = (
  schema: Schema.Top,
  raw: unknown,
  env: Readonly<Record<string, string | undefined>>
): unknown => {
  const ast = SchemaAST.toEncoded(schema.ast)
  const topLevel = new Set(StrictKeys.objectsOf(ast).flatMap(StrictKeys.keysOf).map(norm))
  let out = raw
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith("OCS_") || value === undefined || name === "OCS_CONFIG") continue
    const path = name.slice(4).split("__").filter((p) => p.length > 0)
    if (path.length === 0 || !topLevel.has(norm(path[0]!))) continue
    out = setPath(ast, out, path, parseEnvValue(value))
  }
  return out
}

const parseEnvValue = (value: string): unknown => {
  const t = value.trim()
  if (/^-?\d+(\.\d+)?$/.test(t) && Number.isSafeInteger(Math.trunc(Number(t)))) return Number(t)
  if (t === "true" || t === "false") return t === "true"
  if (t.startsWith("[") || t.startsWith("{")) {
    try {
      return JSON.parse(t)
    } catch {
      return value
    }
  }
  return value
}

/** The field `key` of the object shapes `ast` allows, when one knows it. */
const fieldOf = (ast: SchemaAST.AST | undefined, key: string): SchemaAST.AST | undefined => {
  if (ast === undefined) return undefined
  for (const shape of StrictKeys.objectsOf(ast)) {
    const field = shape.propertySignatures.find((p) => p.name === key)
    if (field !== undefined) return field.type
  }
  return undefined
}

const setPath = (ast: SchemaAST.AST | undefined, obj: unknown, path: ReadonlyArray<string>, value: unknown): unknown => {
  const o = isObject(obj) ? { ...obj } : {}
  const [head, ...rest] = path
  const known = ast === undefined ? [] : StrictKeys.objectsOf(ast).flatMap(StrictKeys.keysOf)
  const key = Object.keys(o).find((k) => norm(k) === norm(head!)) ?? known.find((k) => norm(k) === norm(head!)) ?? camel(head!)
  const field = fieldOf(ast, key)
  if (rest.length === 0) {
    const wantsArray = field !== undefined && StrictKeys.arraysOf(field).length > 0
    o[key] = typeof value === "string" && wantsArray ? value.split(",").map((s) => s.trim()) : value
  } else {
    o[key] = setPath(field, o[key], rest, value)
  }
  return o
}

const camel = (s: string) => s.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())

/**
 * Reads a config file (YAML or JSON; optional) over `defaults`, then `overrides`, then the
 * environment, and decodes it with `schema`. `onFile` adjusts what a file holds before the
 * merge (relative paths in a file are relative to the file, say).
 */
export const load = <S extends Schema.Top>(schema: S, options: {
  readonly defaults: unknown
  readonly file?: string | undefined
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly overrides?: unknown
  readonly onFile?: ((parsed: unknown, file: string) => unknown) | undefined
}): Effect.Effect<S["Type"], ConfigError, S["DecodingServices"]> =>
  Effect.gen(function*() {
    let raw: unknown = options.defaults
    const file = options.file
    if (file !== undefined) {
      const text = yield* Effect.try({
        try: () => Fs.readFileSync(file, "utf8"),
        catch: (e) => new ConfigError({ message: `cannot read config file ${file}: ${String(e)}` })
      })
      const parsed = yield* Effect.try({
        try: () => (Path.extname(file) === ".json" ? JSON.parse(text) : Yaml.parse(text)) as unknown,
        catch: (e) => new ConfigError({ message: `config file ${file} is not valid ${Path.extname(file) === ".json" ? "JSON" : "YAML"}: ${String(e)}` })
      })
      raw = merge(raw, options.onFile === undefined ? parsed : options.onFile(parsed, file))
    }
    if (options.overrides !== undefined) raw = merge(raw, options.overrides)
    raw = applyEnv(schema, raw, options.env ?? {})
    const unknown = StrictKeys.unknownKeys(schema, raw).map(StrictKeys.describe)
    const decoded = yield* Effect.result(Schema.decodeUnknownEffect(schema)(raw, { errors: "all" }))
    if (unknown.length > 0 || decoded._tag === "Failure") {
      const problems = [...unknown, ...(decoded._tag === "Failure" ? [decoded.failure.message] : [])]
      return yield* new ConfigError({ message: `invalid configuration${file === undefined ? "" : ` in ${file}`}:\n${problems.join("\n")}` })
    }
    return decoded.success
  })
