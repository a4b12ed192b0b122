/**
 * The list operations (docs/api-catalogue.md, Paginator): filters (ListFilters.ts) and
 * paginator checked field by field, the cursor decoded and verified, one page read from the
 * operation's lister (typed, Listers.ts, or generic, GenericStore.ts), the page written with
 * the cursor shape of its turn and the end-of-data form of the operation.
 */
import * as Json from "@ocs/protocol/Json"
import { type Call, failure, finish, isObj, type Messages, type Obj } from "./ApiCall.ts"
import type { Business, Token } from "./Auth.ts"
import type { BusinessData } from "./Catalog.ts"
import * as Cursor from "./Cursor.ts"
import { genericLister } from "./GenericStore.ts"
import { checkFilters } from "./ListFilters.ts"
import { IndexCache, page, type Seek, type SortKey } from "./Listing.ts"
import { listers } from "./Listers.ts"
import type { ListOperation } from "./Operations.ts"
import { pageListers } from "./PageService.ts"

const caches = new WeakMap<BusinessData, Map<string, IndexCache<unknown>>>()
const cacheFor = <R>(data: BusinessData, key: string): IndexCache<R> => {
  let byKey = caches.get(data)
  if (byKey === undefined) caches.set(data, byKey = new Map())
  let cache = byKey.get(key)
  if (cache === undefined) byKey.set(key, cache = new IndexCache<unknown>())
  return cache as IndexCache<R>
}

const isEmptyCursor = (v: Json.JsonValue | undefined): boolean =>
  v === undefined || v === null || v === "" || (Array.isArray(v) && v.length === 0) ||
  (isObj(v) && Object.keys(v).length === 0)

export const list = (call: Call, op: ListOperation, business: Business, token: Token, text: string, body: Json.JsonValue) => {
  const messages: Messages = {}
  const warnings: Array<string> = []
  if (!isObj(body)) return failure(call, "ERR_INVALID_FORM_FIELDS", { body: "must be a JSON object" })
  const strict = call.env.settings.strict
  const checked = checkFilters(op, body["filters"], call.env.now(), messages, strict)

  // paginator
  const paginator = body["paginator"]
  if (paginator !== undefined && paginator !== null && !isObj(paginator)) messages["paginator"] = "must be an object"
  const p: Obj = isObj(paginator) ? paginator : {}
  // No default size is documented (Paginator 6); 20 is ours. Above the maximum is refused.
  let size = op.defaultSize
  if (p["size"] !== undefined) {
    const s = p["size"]
    if (typeof s !== "number" || !Number.isInteger(s) || s < 1 || s > op.maxSize) {
      messages["paginator.size"] = `must be an integer between 1 and ${op.maxSize}`
    } else size = s
  }
  let sort = parseSort(op, p["sort"], messages)
  let pageNumber = 1
  let after: Seek | undefined
  /** A rebuilt `{"id": n}` under a sort by more than id: its sort values come from record n. */
  let resolveValues = false
  const next = p["next"]
  const rebuiltId = strict || isEmptyCursor(next) ? undefined : Cursor.rebuilt(next!)
  if (rebuiltId !== undefined && !isIssued(call, op, next!, text)) {
    pageNumber = 2
    after = { values: [], id: rebuiltId }
    resolveValues = sort.some((k) => k.field !== "id")
  } else if (!isEmptyCursor(next)) {
    const raw = Json.extract(text, ["paginator", "next"]) ?? ""
    const decoded = Cursor.decode(
      {
        secret: call.env.cursorSecret,
        operation: call.operation,
        shapes: op.cursorShapes,
        strictKeyOrder: call.env.settings.strictCursors
      },
      next!,
      raw
    )
    if (!decoded.ok) messages["paginator.next"] = decoded.message
    else {
      pageNumber = decoded.position.page
      sort = decoded.position.sort
      after = decoded.position.seek
    }
  }

  // Field errors first: a refused depot is only worth naming in a request that is well formed.
  if (Object.keys(messages).length > 0) return failure(call, "ERR_INVALID_FORM_FIELDS", messages)
  // The page service's reads with a world of their own (PageService.ts); "depot": already answered.
  const pageLister = op.family === "vpage" ? pageListers[`${op.resource}/${op.operation}`] : undefined
  const lister = pageLister !== undefined
    ? pageLister({ call, op, business, token, checked, messages, warnings })
    : op.typed === undefined
    ? genericLister(op.entry, business, checked.filters)
    : listers[op.typed]({ call, op, business, token, checked, messages, warnings })
  if (lister === "depot") return
  if (resolveValues && after !== undefined) {
    const pos = lister.source.posOf(after.id)
    const record = pos === undefined ? undefined : lister.source.at(pos)
    if (record === undefined) {
      return failure(call, "ERR_INVALID_FORM_FIELDS", {
        "paginator.next": `record ${after.id} no longer exists; a list sorted by ${sort.map((k) => k.field).join(", ")} cannot resume from its id alone`
      })
    }
    after = { values: sort.map((k) => lister.source.sortValue(record, k.field)), id: after.id }
  }
  const result = page(lister.source, {
    sort,
    after,
    size,
    predicate: lister.predicate,
    scanBudget: lister.predicate === undefined ? size : Math.max(size * 50, 10_000)
  }, cacheFor(business.data, lister.cacheKey))

  let out = `{"code":1`
  if (warnings.length > 0) out += `,"warning":${JSON.stringify(warnings)}`
  out += `,"data":[`
  for (let i = 0; i < result.records.length; i++) {
    if (i > 0) out += ","
    out += lister.write(result.records[i]!)
  }
  out += "]"
  if (result.next !== undefined) {
    const position: Cursor.CursorPosition = { page: pageNumber + 1, sort, seek: result.next }
    // Not strict: POS lists issue the documented `{"id": n}` when the id alone is the position
    // (docs/api-catalogue.md, "Simulator leniency" 2); strict: the shapes in turn (Paginator 3).
    const idOnly = sort.every((k) => k.field === "id")
    const shape = !strict && op.family === "pos" ? (idOnly ? "id" : "keyed") : op.cursorShapes[(pageNumber - 1) % op.cursorShapes.length]!
    const cursor = Cursor.encode(shape, position, Cursor.signature(call.env.cursorSecret, call.operation, position))
    out += `,"paginator":{"next":${cursor}}}`
  } else if (op.end === "null") out += `,"paginator":{"next":null}}`
  else if (op.end === "absentKey") out += `,"paginator":{}}`
  else out += "}"
  finish(call, 200, "ok", out)
}

/** Whether `next` decodes as a cursor this server issued (so it keeps its own page and sort). */
const isIssued = (call: Call, op: ListOperation, next: Json.JsonValue, text: string): boolean =>
  Cursor.decode(
    { secret: call.env.cursorSecret, operation: call.operation, shapes: op.cursorShapes, strictKeyOrder: false },
    next,
    Json.extract(text, ["paginator", "next"]) ?? ""
  ).ok

const parseSort = (op: ListOperation, sort: Json.JsonValue | undefined, messages: Messages): ReadonlyArray<SortKey> => {
  if (sort === undefined || sort === null) return []
  const entries: Array<[string, Json.JsonValue]> = []
  if (Array.isArray(sort)) {
    sort.forEach((item, i) => {
      if (isObj(item) && Object.keys(item).length === 1) entries.push(Object.entries(item)[0]!)
      else messages[`paginator.sort.${i}`] = "must be an object with one field mapped to asc or desc"
    })
  } else if (isObj(sort)) entries.push(...Object.entries(sort))
  else {
    messages["paginator.sort"] = "must be an object mapping a field to asc or desc"
    return []
  }
  const keys: Array<SortKey> = []
  for (const [field, dir] of entries) {
    if (!op.sortable.includes(field)) {
      messages[`paginator.sort.${field}`] = `cannot sort by ${field}; sortable: ${op.sortable.join(", ")}`
    } else {
      // The page service writes directions ASC/DESC (docs/api-catalogue.md §9).
      const d = op.family === "vpage" && typeof dir === "string" ? dir.toLowerCase() : dir
      if (d !== "asc" && d !== "desc") messages[`paginator.sort.${field}`] = op.family === "vpage" ? "must be ASC or DESC" : "must be asc or desc"
      else keys.push({ field: field === "productId" ? "id" : field, desc: d === "desc" })
    }
  }
  return keys
}
