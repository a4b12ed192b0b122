/**
 * The service itself: POST {base}/v3.0/<resource>/<operation>?appId=&businessId=.
 *
 * Order of checks: route, method, faults, appId, businessId, token (version, binding,
 * expiry), API enabled, rate limit, permission, body JSON, fields. Failures are answered
 * with HTTP 200 by default (spec: "HTTP status codes returned with failures: not shown"),
 * overridable per errorCode (option `errorHttpStatus`) and per fault (`httpStatus`).
 */
import type * as Http from "node:http"
import * as Json from "@ocs/protocol/Json"
import { canonicalId, permits, type Business, type Registry, type Token } from "./Auth.ts"
import type { BusinessData } from "./Catalog.ts"
import { ORDER_STATUSES } from "./Catalog.ts"
import type { CallLog } from "./CallLog.ts"
import * as Cursor from "./Cursor.ts"
import type { Faults } from "./Faults.ts"
import { send } from "./internal/Http.ts"
import { parseInstant } from "./internal/Time.ts"
import { IndexCache, page, type Seek, type SortKey, type SortValue, type Source } from "./Listing.ts"
import { type AddOperation, find, type Family, type ListOperation, operationKey } from "./Operations.ts"
import type { RateLimiter } from "./RateLimits.ts"
import { inventoryView, orderView, paymentView, productText, productView } from "./Views.ts"
import type { Webhooks } from "./Webhooks.ts"

export interface ApiEnv {
  readonly registry: Registry
  readonly limiter: RateLimiter
  readonly calls: CallLog
  readonly faults: Faults
  readonly webhooks: Webhooks
  readonly now: () => number
  readonly cursorSecret: string
  readonly strictCursorKeyOrder: boolean
  readonly errorHttpStatus: { readonly [errorCode: string]: number }
}

export const DEPRECATION_ORDER_PRIVATE_ID = "orderPrivateId is deprecated, use appOrderId"

type Messages = Record<string, string>

interface Call {
  readonly env: ApiEnv
  readonly res: Http.ServerResponse
  readonly started: number
  readonly appId: string | null
  readonly businessId: string | null
  readonly family: Family
  readonly operation: string
  readonly path: string
  readonly locked: boolean
  readonly rateKey: string | undefined
}

const finish = (call: Call, status: number, outcome: string, body: string, contentType?: string): void => {
  send(call.res, status, body, contentType)
  call.env.calls.add({
    at: call.started,
    appId: call.appId,
    businessId: call.businessId,
    family: call.family,
    operation: call.operation,
    path: call.path,
    outcome,
    status,
    locked: call.locked,
    durationMs: call.env.now() - call.started
  })
}

const failure = (call: Call, errorCode: string, messages?: string | Messages, extra?: string): void => {
  const fault = call.env.faults.first("httpStatus", call, (f) => f.errorCode === undefined || f.errorCode === errorCode)
  const status = fault?.status ?? call.env.errorHttpStatus[errorCode] ?? 200
  const body = `{"code":0,"errorCode":${JSON.stringify(errorCode)}${
    messages === undefined ? "" : `,"messages":${JSON.stringify(messages)}`
  }${extra ?? ""}}`
  finish(call, status, errorCode, body)
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Handles one API call; `body` is the raw request body (undefined when over the size limit). */
export const handle = async (
  env: ApiEnv,
  req: Http.IncomingMessage,
  res: Http.ServerResponse,
  family: Family,
  version: string,
  resourceAndOperation: string,
  path: string,
  query: string,
  body: Buffer | undefined
): Promise<void> => {
  const started = env.now()
  const params = new URLSearchParams(query)
  const rawAppId = params.get("appId")
  const rawBusinessId = params.get("businessId")
  const appId = canonicalId(rawAppId) ?? rawAppId
  const businessId = canonicalId(rawBusinessId) ?? rawBusinessId
  const rateKey = appId !== null && businessId !== null ? `${appId}|${businessId}|${path}` : undefined
  const locked = rateKey !== undefined && env.limiter.config.enabled && env.limiter.isLocked(rateKey, started)
  const op = find(family, resourceAndOperation)
  const call: Call = {
    env,
    res,
    started,
    appId,
    businessId,
    family,
    operation: op === undefined ? path : resourceAndOperation,
    path,
    locked,
    rateKey
  }
  if (op === undefined || version !== "3.0") {
    const reason = version !== "3.0" ? `version ${version} is not served` : `no operation ${resourceAndOperation}`
    return finish(call, 404, "ERR_NOT_FOUND", JSON.stringify({ code: 0, errorCode: "ERR_NOT_FOUND", messages: reason }))
  }
  if (req.method !== "POST") {
    return finish(call, 405, "ERR_METHOD_NOT_ALLOWED", `{"code":0,"errorCode":"ERR_METHOD_NOT_ALLOWED","messages":"use POST"}`)
  }
  if (!env.faults.empty && (await applyFaults(call, req))) return

  const auth = env.registry.authenticate(rawAppId, rawBusinessId, req.headers.authorization, version, started)
  if (!auth.ok) return failure(call, auth.errorCode, auth.message)

  if (rateKey !== undefined) {
    const verdict = env.limiter.check(rateKey, call.operation, op.rateLimit, started)
    if (!verdict.allowed) {
      const skew = env.faults.first("skewUnlockedAt", call)?.seconds ?? 0
      const lockedSeconds = Math.max(0, verdict.lockedSeconds - skew)
      const unlockedAt = verdict.unlockedAt - skew
      // spec: ERR_429 response shape: singular `message`, data.lockedSeconds, data.unlockedAt
      return failure(
        call,
        "ERR_429",
        undefined,
        `,"message":"Too many requests: ${call.operation} is locked for ${lockedSeconds} s","data":{"lockedSeconds":${lockedSeconds},"unlockedAt":${unlockedAt}}`
      )
    }
  }
  if (!permits(auth.token, op.permission, call.operation)) {
    return failure(call, "ERR_403", `the access token has no permission for ${op.permission}`)
  }
  if (body === undefined) return failure(call, "ERR_INVALID_DATA", "request body is too large")
  const parsed = Json.parseBytes(body)
  if (parsed._tag === "Failure") return failure(call, "ERR_INVALID_DATA", parsed.failure.message)
  const { text, value } = parsed.success
  if (op.kind === "list") return list(call, op, auth.business, auth.token, text, value)
  return add(call, op, auth.business, value)
}

/** Runs the API-side faults; true when the call was answered (or dropped) by a fault. */
const applyFaults = async (call: Call, req: Http.IncomingMessage): Promise<boolean> => {
  const { faults } = call.env
  const delay = faults.take("latency", call).reduce((sum, f) => sum + f.ms, 0)
  if (delay > 0) await sleep(delay)
  if (faults.first("reset", call) !== undefined) {
    call.env.calls.add({
      at: call.started,
      appId: call.appId,
      businessId: call.businessId,
      family: call.family,
      operation: call.operation,
      path: call.path,
      outcome: "fault:reset",
      status: 0,
      locked: call.locked,
      durationMs: call.env.now() - call.started
    })
    req.socket.destroy()
    return true
  }
  const status = faults.first("status", call)
  if (status !== undefined) {
    const code = status.status ?? 500
    finish(call, code, "fault:status", status.body ?? `${code} simulated server error`, "text/plain; charset=utf-8")
    return true
  }
  const malformed = faults.first("malformed", call)
  if (malformed !== undefined) {
    finish(call, 200, "fault:malformed", malformedBody(malformed.variant))
    return true
  }
  return false
}

const malformedBody = (variant: "nonJson" | "truncated" | "wrongTypes" | "hugeNumbers" | "empty" | "deep"): string => {
  switch (variant) {
    case "nonJson":
      return "<html><body><h1>502 Bad Gateway</h1></body></html>"
    case "truncated":
      return `{"code":1,"data":[{"id":100001,"name":"Red Sh`
    case "wrongTypes":
      return `{"code":"1","data":{"id":"x"},"paginator":"next","warning":42}`
    case "hugeNumbers":
      return `{"code":1,"data":[{"id":1${"0".repeat(400)},"price":1e999,"quantity":-1e400}],"paginator":{"next":[${
        "9".repeat(1000)
      }]}}`
    case "empty":
      return ""
    case "deep":
      return "[".repeat(100_000) + "]".repeat(100_000)
  }
}

// -------------------------------------------------------------------------------------------
// List operations
// -------------------------------------------------------------------------------------------

type Obj = { readonly [key: string]: Json.JsonValue }
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v)

interface Lister<R> {
  readonly source: Source<R>
  readonly predicate: ((record: R) => boolean) | undefined
  readonly write: (record: R) => string
  readonly cacheKey: string
}

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

const list = (call: Call, op: ListOperation, business: Business, token: Token, text: string, body: Json.JsonValue) => {
  const messages: Messages = {}
  const warnings: Array<string> = []
  if (!isObj(body)) return failure(call, "ERR_INVALID_FORM_FIELDS", { body: "must be a JSON object" })
  const filters = body["filters"]
  if (filters !== undefined && filters !== null && !isObj(filters)) messages["filters"] = "must be an object"
  const f: Obj = isObj(filters) ? filters : {}
  for (const key of Object.keys(f)) {
    if (!op.filters.includes(key)) messages[`filters.${key}`] = `unknown filter; accepted: ${op.filters.join(", ")}`
  }
  const from = f["updatedAtFrom"] === undefined ? undefined : parseInstant(f["updatedAtFrom"])
  const to = f["updatedAtTo"] === undefined ? undefined : parseInstant(f["updatedAtTo"])
  if (f["updatedAtFrom"] !== undefined && from === undefined) {
    messages["filters.updatedAtFrom"] = "must be an ISO-8601 date-time or unix seconds"
  }
  if (f["updatedAtTo"] !== undefined && to === undefined) {
    messages["filters.updatedAtTo"] = "must be an ISO-8601 date-time or unix seconds"
  }
  const inTime = from === undefined && to === undefined
    ? undefined
    : (ms: number) => (from === undefined || ms >= from) && (to === undefined || ms <= to)

  // paginator
  const paginator = body["paginator"]
  if (paginator !== undefined && paginator !== null && !isObj(paginator)) messages["paginator"] = "must be an object"
  const p: Obj = isObj(paginator) ? paginator : {}
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
  const next = p["next"]
  if (!isEmptyCursor(next)) {
    const raw = Json.extract(text, ["paginator", "next"]) ?? ""
    const decoded = Cursor.decode(
      {
        secret: call.env.cursorSecret,
        operation: call.operation,
        shapes: op.cursorShapes,
        strictKeyOrder: call.env.strictCursorKeyOrder
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

  const lister = makeLister(call, op, business, token, f, inTime, messages, warnings)
  if (lister === "depot") return
  if (Object.keys(messages).length > 0 || lister === undefined) {
    return failure(call, "ERR_INVALID_FORM_FIELDS", messages)
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
    const shape = op.cursorShapes[(pageNumber - 1) % op.cursorShapes.length]!
    const cursor = Cursor.encode(shape, position, Cursor.signature(call.env.cursorSecret, call.operation, position))
    out += `,"paginator":{"next":${cursor}}}`
  } else if (op.end === "null") out += `,"paginator":{"next":null}}`
  else if (op.end === "absentKey") out += `,"paginator":{}}`
  else out += "}"
  finish(call, 200, "ok", out)
}

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
    } else if (dir !== "asc" && dir !== "desc") messages[`paginator.sort.${field}`] = "must be asc or desc"
    else keys.push({ field: field === "productId" ? "id" : field, desc: dir === "desc" })
  }
  return keys
}

const tableSource = <R extends { readonly id: bigint; readonly updatedAtMs: number }>(
  table: {
    readonly positions: number
    at(pos: number): R | undefined
    idAt(pos: number): bigint
    posOf(id: bigint): number | undefined
    readonly base: bigint
    readonly version: number
  },
  extra: (record: R, field: string) => SortValue | undefined = () => undefined
): Source<R> => ({
  positions: () => table.positions,
  at: (pos) => table.at(pos),
  idAt: (pos) => table.idAt(pos),
  posOf: (id) => table.posOf(id),
  base: table.base,
  version: () => table.version,
  sortValue: (r, field) => field === "updatedAt" ? r.updatedAtMs : field === "id" ? r.id : extra(r, field) ?? ""
})

const asDepot = (v: Json.JsonValue | undefined): number | undefined =>
  typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : undefined

/** Builds the source and filter of a list; "depot" when it already answered ERR_INVALID_DEPOT_ID. */
const makeLister = (
  call: Call,
  op: ListOperation,
  business: Business,
  token: Token,
  f: Obj,
  inTime: ((ms: number) => boolean) | undefined,
  messages: Messages,
  warnings: Array<string>
): Lister<any> | undefined | "depot" => {
  const data = business.data
  switch (op.resource) {
    case "product": {
      const name = f["name"]
      if (name !== undefined && typeof name !== "string") messages["filters.name"] = "must be a string"
      const needle = typeof name === "string" && name !== "" ? name.toLowerCase() : undefined
      const predicate = needle === undefined && inTime === undefined ? undefined : (p: { name: string; updatedAtMs: number }) =>
        (needle === undefined || p.name.toLowerCase().includes(needle)) && (inTime === undefined || inTime(p.updatedAtMs))
      return {
        source: tableSource(data.products, (p, field) => field === "name" ? p.name : field === "price" ? p.price : undefined),
        predicate,
        write: productText,
        cacheKey: "product"
      }
    }
    case "order": {
      const appOrderIdFilter = f["appOrderId"]
      const privateId = f["orderPrivateId"]
      if (privateId !== undefined) warnings.push(DEPRECATION_ORDER_PRIVATE_ID)
      const wanted = appOrderIdFilter ?? privateId
      if (wanted !== undefined && typeof wanted !== "string") {
        messages[appOrderIdFilter !== undefined ? "filters.appOrderId" : "filters.orderPrivateId"] = "must be a string"
      }
      const status = f["status"]
      if (status !== undefined && (typeof status !== "string" || !(ORDER_STATUSES as ReadonlyArray<string>).includes(status))) {
        messages["filters.status"] = `must be one of ${ORDER_STATUSES.join(", ")}`
      }
      let depot: number | undefined
      if (f["depotId"] !== undefined) {
        depot = asDepot(f["depotId"])
        if (depot === undefined) messages["filters.depotId"] = "must be a positive integer"
        else if (!token.depots.includes(depot)) {
          failure(call, "ERR_INVALID_DEPOT_ID", { "filters.depotId": `depot ${depot} was not granted to this token` })
          return "depot"
        }
      }
      const granted = new Set(token.depots)
      const allGranted = business.depots.every((d) => granted.has(d))
      const predicate = wanted === undefined && status === undefined && depot === undefined && inTime === undefined &&
          allGranted
        ? undefined
        : (o: { appOrderId: string; status: string; depotId: number; updatedAtMs: number }) =>
          (wanted === undefined || o.appOrderId === wanted) && (status === undefined || o.status === status) &&
          (depot === undefined ? granted.has(o.depotId) : o.depotId === depot) &&
          (inTime === undefined || inTime(o.updatedAtMs))
      return {
        source: tableSource(data.orders),
        predicate,
        write: (o) => Json.stringify(orderView(o)),
        cacheKey: "order"
      }
    }
    case "payment": {
      const orderId = f["orderId"]
      const wanted = orderId === undefined ? undefined : canonicalId(orderId)
      if (orderId !== undefined && wanted === undefined) messages["filters.orderId"] = "must be a positive integer"
      const wantedId = wanted === undefined ? undefined : BigInt(wanted)
      const predicate = wantedId === undefined && inTime === undefined ? undefined : (p: { orderId: bigint; updatedAtMs: number }) =>
        (wantedId === undefined || p.orderId === wantedId) && (inTime === undefined || inTime(p.updatedAtMs))
      return { source: tableSource(data.payments), predicate, write: (p) => Json.stringify(paymentView(p)), cacheKey: "payment" }
    }
    case "inventory": {
      const depot = asDepot(f["depotId"])
      if (f["depotId"] === undefined) messages["filters.depotId"] = "is required"
      else if (depot === undefined) messages["filters.depotId"] = "must be a positive integer"
      else if (!token.depots.includes(depot) || !business.depots.includes(depot)) {
        failure(call, "ERR_INVALID_DEPOT_ID", { "filters.depotId": `depot ${depot} was not granted to this token` })
        return "depot"
      }
      if (depot === undefined) return undefined
      const products = data.products
      const source: Source<{ productId: bigint; updatedAtMs: number; depotId: number; quantity: number }> = {
        positions: () => products.positions,
        at: (pos) => data.inventoryAt(pos, depot),
        idAt: (pos) => products.idAt(pos),
        posOf: (id) => products.posOf(id),
        base: products.base,
        version: () => products.version * 1_000_003 + data.inventoryVersion,
        sortValue: (r, field) => field === "updatedAt" ? r.updatedAtMs : r.productId
      }
      const predicate = inTime === undefined ? undefined : (r: { updatedAtMs: number }) => inTime(r.updatedAtMs)
      return { source, predicate, write: (r) => Json.stringify(inventoryView(r)), cacheKey: `inventory:${depot}` }
    }
  }
}

// -------------------------------------------------------------------------------------------
// product/add
// -------------------------------------------------------------------------------------------

const add = (call: Call, op: AddOperation, business: Business, body: Json.JsonValue) => {
  const items = Array.isArray(body) ? body : isObj(body) && Array.isArray(body["products"]) ? body["products"] : undefined
  if (items === undefined) {
    return failure(call, "ERR_INVALID_FORM_FIELDS", { products: "expected an array of products" })
  }
  const messages: Messages = {}
  if (items.length === 0) messages["products"] = "must not be empty"
  if (items.length > op.maxItems) messages["products"] = `at most ${op.maxItems} products per call`
  const seen = new Set<string>()
  const data = business.data
  const valid: Array<{ appProductId: string; code: string; barcode: string | undefined; name: string; price: number }> = []
  items.forEach((item, i) => {
    const at = `products.${i}`
    if (!isObj(item)) {
      messages[at] = "must be an object"
      return
    }
    const appProductId = item["appProductId"]
    const name = item["name"]
    const price = item["price"]
    const code = item["code"]
    const barcode = item["barcode"]
    if (appProductId === undefined) messages[`${at}.appProductId`] = "is required"
    else if (typeof appProductId !== "string" || appProductId === "") messages[`${at}.appProductId`] = "must be a non-empty string"
    else if (seen.has(appProductId) || data.hasAppProductId(appProductId)) messages[`${at}.appProductId`] = "already exists"
    if (typeof appProductId === "string") seen.add(appProductId)
    if (name === undefined) messages[`${at}.name`] = "is required"
    else if (typeof name !== "string" || name.trim() === "") messages[`${at}.name`] = "must be a non-empty string"
    if (price === undefined) messages[`${at}.price`] = "is required"
    else if (typeof price !== "number" || !Number.isFinite(price)) messages[`${at}.price`] = "must be a number"
    else if (price < 0) messages[`${at}.price`] = "must not be negative"
    if (code !== undefined && typeof code !== "string") messages[`${at}.code`] = "must be a string"
    if (barcode !== undefined && typeof barcode !== "string") messages[`${at}.barcode`] = "must be a string"
    if (typeof appProductId === "string" && typeof name === "string" && typeof price === "number") {
      valid.push({
        appProductId,
        name,
        price,
        code: typeof code === "string" ? code : appProductId,
        barcode: typeof barcode === "string" ? barcode : undefined
      })
    }
  })
  if (Object.keys(messages).length > 0) return failure(call, "ERR_INVALID_FORM_FIELDS", messages)
  const now = call.env.now()
  const added = valid.map((input) =>
    data.addProduct({
      ...input,
      barcode: input.barcode ?? `29${String(data.products.positions).padStart(10, "0")}`
    }, now)
  )
  for (const product of added) call.env.webhooks.emit(business.businessId, "productAdd", productView(product))
  finish(
    call,
    200,
    "ok",
    Json.stringify({
      code: 1,
      data: added.map((p) => ({ appProductId: p.appProductId, id: p.id, barcode: p.barcode }))
    })
  )
}

export { operationKey }
