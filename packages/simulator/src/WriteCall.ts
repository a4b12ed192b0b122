/**
 * One write call in flight and how it ends: refused with ERR_INVALID_FORM_FIELDS naming each
 * field, or answered after its effect was applied. The answer goes through `answered`, where
 * the after-effect faults act: `latency` with phase "after" (a slow answer to a write that
 * took effect; a caller that gives up meanwhile never gets the answer) and `lostAnswer` (the
 * connection destroyed with no response, the effect kept) and `unlistedId` (answered as
 * applied, but naming ids no record takes: the effect never shows under the answered id).
 */
import * as Json from "@ocs/protocol/Json"
import { type Call, failure, finish, logCall, type Messages } from "./ApiCall.ts"
import { sleep } from "./ApiFaults.ts"
import type { Business, Token } from "./Auth.ts"
import { Form } from "./internal/Form.ts"
import type { WriteOperation } from "./Operations.ts"

export interface WriteCall {
  readonly call: Call
  readonly op: WriteOperation
  readonly business: Business
  readonly token: Token
  readonly body: Json.JsonValue
  /** The size of the business's effects ledger when the call began: its effects follow. */
  readonly effectsFrom: number
}

/** ERR_INVALID_FORM_FIELDS with every message the form collected. */
export const refuse = (w: WriteCall, form: Form | Messages): void =>
  failure(w.call, "ERR_INVALID_FORM_FIELDS", form instanceof Form ? form.messages : form)

/** Whether the token may act on the depot (a depot of the business granted to the token). */
export const depotGranted = (w: WriteCall, depotId: number): boolean =>
  w.business.depots.includes(depotId) && w.token.depots.includes(depotId)

/** docs/api-catalogue.md, Authentication 5: a depot not granted gives ERR_INVALID_DEPOT_ID. */
export const refuseDepot = (w: WriteCall, depotId: number): void =>
  failure(w.call, "ERR_INVALID_DEPOT_ID", `depot ${depotId} is not granted to this access token`)

const gone = (call: Call): boolean => call.res.destroyed || call.res.socket?.destroyed === true

/** Answers a write that took effect: `{ code: 1, data }`, unless an after-effect fault acts. */
export const answered = async (w: WriteCall, data: unknown): Promise<void> => {
  const { call } = w
  const { faults } = call.env
  // Taken before any wait: other calls may add effects while this answer is delayed.
  const mine = w.business.data.effects.since(w.effectsFrom)
  if (!faults.empty) {
    const delay = faults.take("latency", call, (f) => f.phase === "after").reduce((sum, f) => sum + f.ms, 0)
    if (delay > 0) await sleep(delay)
    if (!gone(call) && faults.first("lostAnswer", call) !== undefined) {
      for (const e of mine) e.answer = "lost"
      logCall(call, 0, "fault:lostAnswer")
      call.res.socket?.destroy()
      return
    }
  }
  if (gone(call)) {
    // The caller gave up before the answer left: it cannot know the write took effect.
    for (const e of mine) e.answer = "lost"
    logCall(call, 0, "callerGone")
    return
  }
  for (const e of mine) e.answer = "answered"
  if (!faults.empty && faults.first("unlistedId", call) !== undefined) {
    finish(call, 200, "fault:unlistedId", Json.stringify({ code: 1, data: unlisted(data) }))
    return
  }
  finish(call, 200, "ok", Json.stringify({ code: 1, data }))
}

/** Ids no record takes: the simulator's own ids stay far below. */
let nextUnlisted = 9_000_000_000_000n

/** The answer's data with each entity's `id` (the object's, or each item's) replaced by an unlisted one. */
const unlisted = (data: unknown): unknown => {
  const swap = (item: unknown) =>
    typeof item === "object" && item !== null && "id" in item ? { ...item, id: ++nextUnlisted } : item
  return Array.isArray(data) ? data.map(swap) : swap(data)
}
