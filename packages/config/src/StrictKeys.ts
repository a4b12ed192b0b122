/**
 * Keys a schema does not know, at any depth, each with its path and the nearest known name.
 *
 * A decoder strips unknown keys by default, so `syncc:` or `portt:` in a configuration file
 * would be dropped without a word and the server would run on defaults the operator thought
 * they had changed. This walks the value beside the schema's encoded side (what the file
 * holds) and names every key no schema field accepts: "`server.portt`: unknown key; did you
 * mean `port`?". Records (an index signature) accept any key and check the values under it;
 * `Unknown` fields (a plugin's own config) are left to their owner.
 */
import { Schema, SchemaAST } from "effect"

export interface UnknownKey {
  /** Where the key is, e.g. `["server", "portt"]` or `["tenants", 0, "appid"]`. */
  readonly path: ReadonlyArray<string | number>
  /** A known key at the same level, when one is close enough to be the intended one. */
  readonly suggestion: string | undefined
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Edit distance (insertions, deletions, substitutions), case-insensitive. */
export const distance = (a: string, b: string): number => {
  const x = a.toLowerCase()
  const y = b.toLowerCase()
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j)
  for (let i = 1; i <= x.length; i++) {
    const current = [i]
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[y.length]!
}

/**
 * The known name nearest to `key`, if within a third of its length (at least 2 edits):
 * `syncc` -> `sync`, `portt` -> `port`, `dataDIR` -> `dataDir`; `foo` suggests nothing.
 */
export const nearest = (key: string, known: ReadonlyArray<string>): string | undefined => {
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const name of known) {
    const d = distance(key, name)
    if (d < bestDistance) {
      best = name
      bestDistance = d
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined
}

const resolve = (ast: SchemaAST.AST): SchemaAST.AST => ast._tag === "Suspend" ? resolve(ast.thunk()) : ast

/** The object shapes an AST allows (the members of an optional field's union, say). */
export const objectsOf = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.Objects> => {
  const a = resolve(ast)
  if (a._tag === "Objects") return [a]
  if (a._tag === "Union") return a.types.flatMap(objectsOf)
  return []
}

export const arraysOf = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.Arrays> => {
  const a = resolve(ast)
  if (a._tag === "Arrays") return [a]
  if (a._tag === "Union") return a.types.flatMap(arraysOf)
  return []
}

export const keysOf = (o: SchemaAST.Objects) => o.propertySignatures.flatMap((p) => typeof p.name === "string" ? [p.name] : [])

const walk = (ast: SchemaAST.AST, value: unknown, path: ReadonlyArray<string | number>, out: Array<UnknownKey>): void => {
  if (Array.isArray(value)) {
    const arrays = arraysOf(ast)
    if (arrays.length === 0) return
    const shape = arrays[0]!
    value.forEach((item, i) => {
      const element = shape.elements[i] ?? shape.rest[0]
      if (element !== undefined) walk(element, item, [...path, i], out)
    })
    return
  }
  if (!isObject(value)) return
  const shapes = objectsOf(ast)
  if (shapes.length === 0) return
  // Of several shapes (a union of structs), judge the value by the one that knows most of it.
  const keys = Object.keys(value)
  const shape = shapes.length === 1
    ? shapes[0]!
    : shapes.reduce((best, s) => keys.filter((k) => keysOf(s).includes(k)).length > keys.filter((k) => keysOf(best).includes(k)).length ? s : best)
  const known = keysOf(shape)
  for (const key of keys) {
    const field = shape.propertySignatures.find((p) => p.name === key)
    if (field !== undefined) walk(field.type, value[key], [...path, key], out)
    else if (shape.indexSignatures.length > 0) walk(shape.indexSignatures[0]!.type, value[key], [...path, key], out)
    else out.push({ path: [...path, key], suggestion: nearest(key, known) })
  }
}

/** Every key of `value` that `schema` does not know, in the order they appear. */
export const unknownKeys = (schema: Schema.Top, value: unknown): ReadonlyArray<UnknownKey> => {
  const out: Array<UnknownKey> = []
  walk(SchemaAST.toEncoded(schema.ast), value, [], out)
  return out
}

/** `a.b[0].c` */
export const formatPath = (path: ReadonlyArray<string | number>) =>
  path.map((p, i) => typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`).join("")

/** "`server.portt`: unknown key; did you mean `port`?" */
export const describe = (u: UnknownKey) =>
  `\`${formatPath(u.path)}\`: unknown key${u.suggestion === undefined ? "" : `; did you mean \`${u.suggestion}\`?`}`
