/**
 * The shape of one catalogue entry: a documented read operation as plain data.
 *
 * Field trees name the documented fields of one record; a field is a kind ("number",
 * "string", "boolean", "unknown"), a nested tree, or a one-element list of either (an array).
 */
export type FieldKind = "number" | "string" | "boolean" | "unknown"
export type FieldType = FieldKind | FieldTree | readonly [FieldType]
export interface FieldTree { readonly [name: string]: FieldType }

/** How a filter's value is written: unix seconds and `yyyy-mm-dd` dates are told apart. */
export type FilterKind = "number" | "number[]" | "string" | "string[]" | "boolean" | "object" | "unixSeconds" | "date" | "unknown"

/**
 * A range the operation insists on: records outside `[from, to]` are only reachable through
 * several queries of at most `maxDays` each (bill/list: 31 days).
 */
export interface WindowRule {
  readonly from: string
  readonly to: string
  readonly format: "unix" | "date"
  readonly maxDays: number
}

export type Certainty = "documented" | "seen in a public client" | "inferred"

export interface CatalogueEntry {
  readonly family: "pos" | "vpage"
  readonly resource: string
  readonly operation: string
  /** `list`: `data` is an array of records; `object`: one record (product/detail). */
  readonly shape: "list" | "object"
  readonly pageSizeMax?: number
  /** Dotted path of the record's id (`info.id` for orders). */
  readonly idField?: string
  readonly createdAtField?: string
  readonly updatedAtField?: string
  readonly window?: WindowRule
  /** Filters selecting records changed in a range (unix seconds). */
  readonly incremental?: { readonly from: string; readonly to: string; readonly format: "unix" }
  readonly filters: { readonly [name: string]: FilterKind }
  readonly requiredFilters?: ReadonlyArray<string>
  readonly sort?: ReadonlyArray<string>
  readonly record: FieldTree
  readonly certainty: Certainty
}
