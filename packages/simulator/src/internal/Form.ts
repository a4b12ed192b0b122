/**
 * Field checks of a write's body: each check reads one field, records a message under its
 * dotted path when the field is missing or of the wrong kind, and returns the value when it
 * is usable. A write answers ERR_INVALID_FORM_FIELDS with every message at once
 * (docs/api-catalogue.md §11, messages form 3), and stores nothing when there is any.
 */
import type * as Json from "@ocs/protocol/Json"
import { isObj, type Obj } from "../ApiCall.ts"
import { canonicalId } from "../Auth.ts"

export type { Obj }

interface Presence {
  readonly required?: boolean | undefined
}

export class Form {
  readonly messages: Record<string, string> = {}

  get ok(): boolean {
    for (const _ in this.messages) return false
    return true
  }

  fail(path: string, message: string): void {
    if (this.messages[path] === undefined) this.messages[path] = message
  }

  private absent(value: unknown, path: string, options: Presence): boolean {
    if (value !== undefined && value !== null) return false
    if (options.required === true) this.fail(path, "is required")
    return true
  }

  str(o: Obj, key: string, path: string, options: Presence & { readonly max?: number; readonly nonEmpty?: boolean } = {}): string | undefined {
    const v = o[key]
    if (this.absent(v, path, options)) return undefined
    if (typeof v !== "string") return this.fail(path, "must be a string"), undefined
    if ((options.nonEmpty ?? options.required) === true && v.trim() === "") return this.fail(path, "must not be empty"), undefined
    if (options.max !== undefined && v.length > options.max) return this.fail(path, `at most ${options.max} characters`), undefined
    return v
  }

  num(o: Obj, key: string, path: string, options: Presence & { readonly min?: number; readonly int?: boolean; readonly positive?: boolean } = {}): number | undefined {
    const v = o[key]
    if (this.absent(v, path, options)) return undefined
    if (typeof v !== "number" || !Number.isFinite(v)) return this.fail(path, "must be a number"), undefined
    if (options.int === true && !Number.isInteger(v)) return this.fail(path, "must be an integer"), undefined
    if (options.positive === true && v <= 0) return this.fail(path, "must be greater than 0"), undefined
    if (options.min !== undefined && v < options.min) return this.fail(path, `must be at least ${options.min}`), undefined
    return v
  }

  /** A number from a set of allowed values. */
  oneOf(o: Obj, key: string, path: string, allowed: ReadonlyArray<number>, options: Presence = {}): number | undefined {
    const v = this.num(o, key, path, { ...options, int: true })
    if (v === undefined) return undefined
    if (!allowed.includes(v)) return this.fail(path, `must be one of ${allowed.join(", ")}`), undefined
    return v
  }

  /** An id (a positive integer, a bigint or a decimal string), as a bigint. */
  id(o: Obj, key: string, path: string, options: Presence = {}): bigint | undefined {
    const v = o[key]
    if (this.absent(v, path, options)) return undefined
    const id = canonicalId(v)
    if (id === undefined) return this.fail(path, "must be a positive integer id"), undefined
    return BigInt(id)
  }

  obj(o: Obj, key: string, path: string, options: Presence = {}): Obj | undefined {
    const v = o[key]
    if (this.absent(v, path, options)) return undefined
    if (!isObj(v)) return this.fail(path, "must be an object"), undefined
    return v
  }

  arr(o: Obj, key: string, path: string, options: Presence & { readonly max?: number; readonly nonEmpty?: boolean } = {}): ReadonlyArray<Json.JsonValue> | undefined {
    const v = o[key]
    if (this.absent(v, path, options)) return undefined
    if (!Array.isArray(v)) return this.fail(path, "must be an array"), undefined
    if ((options.nonEmpty ?? options.required) === true && v.length === 0) return this.fail(path, "must not be empty"), undefined
    if (options.max !== undefined && v.length > options.max) return this.fail(path, `at most ${options.max} items`), undefined
    return v
  }

  /** The objects of an array, each checked by `each` with its own path (`products.3`). */
  each<A>(items: ReadonlyArray<Json.JsonValue>, path: string, each: (item: Obj, at: string, index: number) => A | undefined): Array<A> {
    const out: Array<A> = []
    items.forEach((item, i) => {
      const at = `${path}.${i}`
      if (!isObj(item)) return this.fail(at, "must be an object")
      const value = each(item, at, i)
      if (value !== undefined) out.push(value)
    })
    return out
  }
}

/** The entries of `o` whose value is not undefined (a change of only the fields sent). */
export const defined = <A extends object>(o: A): { [K in keyof A]?: Exclude<A[K], undefined> } =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof A]?: Exclude<A[K], undefined> }
