/**
 * `order.edit` against the copy (docs/api-catalogue.md §3.4, Write operations rule 5):
 *
 * - **Status moves.** The service refuses any edit of an order handed to a carrier or finished
 *   (`CommandKind.ORDER_NOT_EDITABLE`), lets `info.status` become only confirmed, customer or
 *   system cancelled, success or returned (the payload's Schema), and keeps a cancelled order
 *   cancelled (`inferred`). `forbiddenMove` names the refusal, so the engine refuses before any
 *   call.
 * - **Only what changes.** A field sent empty clears the stored value, so a payload built from
 *   another system's model ("" for what it does not know) would wipe data. `trim` drops every
 *   field the copy already shows with that value; an empty value is sent only where the copy
 *   holds something (a clear the caller asked for). Fields the copy cannot compare go as asked.
 *
 * Pure: the engine reads the copy and passes the order's record.
 */
import { CommandKind, Records } from "@ocs/protocol"

/** docs/api-catalogue.md §3.2: carrier cancelled, customer cancelled, system cancelled, out of stock. */
export const CANCELLED: ReadonlySet<string> = new Set(["58", "63", "64", "68"])

/** Why the service would refuse moving an order from `current` to `next`; undefined when it may. */
export const forbiddenMove = (current: string, next: number | undefined): string | undefined => {
  if (CommandKind.ORDER_NOT_EDITABLE.has(current)) return `has status ${current} (handed to a carrier or finished): the service refuses any edit`
  if (next !== undefined && CANCELLED.has(current) && !CANCELLED.has(String(next))) {
    return `is cancelled (status ${current}) and cannot move to ${next}: a cancelled order stays cancelled`
  }
  return undefined
}

const text = (v: unknown): string => (v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v))

/** Where the order/list record holds what each field of the edit sets (docs/api-catalogue.md §3.2). */
const INFO: ReadonlyArray<readonly [string, string]> = [
  ["description", "info.description"],
  ["privateDescription", "info.privateDescription"],
  ["status", "info.status"]
]
const PAYMENT: ReadonlyArray<readonly [string, string]> = [
  ["transferAmount", "payment.transfer.amount"],
  ["transferAccountId", "payment.transfer.accountId"]
]

/** Whether the copy shows `value` at `path` (absent in the record: cannot tell, so not shown). */
const shows = (record: unknown, path: string, value: unknown): boolean => {
  const at = Records.valueAt(record, path)
  return at !== undefined && text(at) === text(value)
}

const sameTags = (record: unknown, tagIds: ReadonlyArray<string | number>): boolean => {
  const tags = Records.valueAt(record, "info.tags")
  if (!Array.isArray(tags)) return false
  const have = tags.map((t) => text((t as { id?: unknown })?.id)).sort()
  const want = tagIds.map(text).sort()
  return have.length === want.length && have.every((t, i) => t === want[i])
}

/** An object without the keys the copy already shows; undefined when none is left. */
const without = (o: Readonly<Record<string, unknown>>, drop: (key: string, value: unknown) => boolean): Record<string, unknown> | undefined => {
  const kept = Object.fromEntries(Object.entries(o).filter(([k, v]) => !drop(k, v)))
  return Object.keys(kept).length === 0 ? undefined : kept
}

/**
 * The body to send: the payload less what the copy's order record already shows. When the copy
 * shows every field, the payload goes as asked (setting the same values again is harmless, and
 * guards against a copy that lags behind the service).
 */
export const trim = (payload: CommandKind.OrderEdit, record: unknown): { readonly body: CommandKind.OrderEdit; readonly dropped: ReadonlyArray<string> } => {
  const dropped: Array<string> = []
  const mark = (path: string) => (dropped.push(path), true)
  const { id, ...infoRest } = payload.info
  const info = without(infoRest, (k, v) =>
    k === "tagIds"
      ? sameTags(record, v as ReadonlyArray<string | number>) && mark("info.tagIds")
      : INFO.some(([from, at]) => from === k && shows(record, at, v)) && mark(`info.${k}`))
  const shippingAddress = payload.shippingAddress === undefined
    ? undefined
    : without(payload.shippingAddress, (k, v) => shows(record, `shippingAddress.${k}`, v) && mark(`shippingAddress.${k}`))
  const payment = payload.payment === undefined
    ? undefined
    : without(payload.payment, (k, v) => PAYMENT.some(([from, at]) => from === k && shows(record, at, v)) && mark(`payment.${k}`))
  const body = {
    info: { id, ...info },
    ...(shippingAddress === undefined ? {} : { shippingAddress }),
    ...(payload.carrier === undefined ? {} : { carrier: payload.carrier }),
    ...(payment === undefined ? {} : { payment })
  } as CommandKind.OrderEdit
  const changes = Object.keys(body).length > 1 || Object.keys(body.info).length > 1
  return changes ? { body, dropped } : { body: payload, dropped: [] }
}
