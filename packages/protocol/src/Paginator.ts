/**
 * Cursor pagination.
 *
 * docs/api-catalogue.md, Paginator (request and response):
 *  1. the first page omits `next`;
 *  2. `next` is passed back exactly in the structure received (an object stays an object with
 *     the same keys, never reduced to a bare value or a list of values);
 *  3. its structure may differ between operations and between pages of one operation;
 *  4. no `next`, or `next: null`, means the data is exhausted;
 *  5. a page with fewer records than `size` but with a `next` is NOT the end.
 *
 * So a cursor is opaque JSON text, kept byte for byte from the response (key order, number
 * literals, whitespace inside the value) and spliced back into the next request unchanged.
 */
import { Option, Result, Schema } from "effect"
import * as Json from "./Json.ts"

/** An opaque cursor: the exact JSON text of a response's `paginator.next`. */
export class Cursor extends Json.RawJson {
  static readonly tag = "Cursor"
}

/** Reads back a cursor persisted earlier (its exact text). */
export const cursorFromText = (text: string): Result.Result<Cursor, Json.JsonError> =>
  Result.map(Json.raw(text), (raw) => new Cursor(raw.text))

/**
 * The cursor for the following page, taken from a response body's exact text.
 * `None` when the data is exhausted (docs/api-catalogue.md, Paginator 4: absent or null ends).
 * The body must be valid JSON (decode the envelope first).
 */
export const nextCursor = (responseText: string): Option.Option<Cursor> => {
  const text = Json.extract(responseText, ["paginator", "next"])
  // docs/api-catalogue.md, Paginator 4: no `next`, or `next` null, means exhausted.
  if (text === undefined || text === "null") return Option.none()
  return Option.some(new Cursor(text))
}

/** Sort criteria: product/list shows a field name mapped to a direction. */
export const SortDirection = Schema.Literals(["asc", "desc"])
export type SortDirection = typeof SortDirection.Type

export interface PaginatorRequest {
  readonly size?: number | undefined
  readonly sort?: unknown
  /** Omitted for the first page (docs/api-catalogue.md, Paginator 1). */
  readonly next?: Cursor | undefined
}

/** Default maximum page size. docs/api-catalogue.md, Paginator: at most 100 unless an operation states more. */
export const DEFAULT_PAGE_SIZE_MAX = 100

/**
 * The `paginator` object of a request body. `next` is spliced in byte for byte; it is left
 * out for the first page.
 */
export const toRequest = (paginator: PaginatorRequest): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  if (paginator.size !== undefined) out["size"] = paginator.size
  if (paginator.sort !== undefined) out["sort"] = paginator.sort
  if (paginator.next !== undefined) out["next"] = paginator.next
  return out
}

/**
 * Interprets `paginator.next` of a request (server side, e.g. the simulator): absent, null or
 * `""` mean the first page (docs/api-catalogue.md, §2 Products: `next` empty or omitted for the first page).
 */
export const requestedNext = (next: unknown): Option.Option<unknown> =>
  next === undefined || next === null || next === "" ? Option.none() : Option.some(next)

/** One page of a list operation. */
export interface Page<A> {
  readonly records: ReadonlyArray<A>
  /** The cursor that produced this page (None for the first). */
  readonly cursor: Option.Option<Cursor>
  /** The cursor of the following page; None when exhausted. */
  readonly next: Option.Option<Cursor>
  /** The page size asked for. */
  readonly size: number
  /** The response body exactly as received. */
  readonly text: string
}

/** docs/api-catalogue.md, Paginator 5: a short page with a `next` still has more data. Only `next` decides. */
export const isLast = <A>(page: Page<A>): boolean => Option.isNone(page.next)
