/** Not served yet: answered as an unknown operation. */
import { finish } from "./ApiCall.ts"
import type { WriteCall } from "./ApiWrite.ts"

export const billAddRetail = (w: WriteCall) =>
  finish(w.call, 404, "ERR_NOT_FOUND", JSON.stringify({ code: 0, errorCode: "ERR_NOT_FOUND", messages: "not served yet" }))
