/**
 * How one attempt of a command ended, from the transport's answer or error (docs/architecture.md
 * §4.31): answered, refused by the service, provably not sent, or lost (it may have taken effect).
 */
import type { EngineRecordCommands } from "@ocs/protocol"
import type { CommerceClient as Client } from "@ocs/transport"

type CallError = Client.CallError
type Reason = EngineRecordCommands.Reason

export type Outcome =
  | {
    readonly _tag: "Answered"
    readonly data: unknown
    readonly text: string
    readonly status: number
    /** Set when the call carried several commands (coalesced): this one's share. */
    readonly call?: EngineRecordCommands.CallShare | undefined
  }
  /** An API refusal: the service answered and did not apply it. */
  | { readonly _tag: "Refused"; readonly error: CallError; readonly status: number; readonly text: string }
  /** The request provably did not take effect (refused connection, still locked): send again. */
  | { readonly _tag: "NotSent"; readonly reason: Reason }
  | { readonly _tag: "Lost"; readonly reason: Reason }

export const reasonOf = (error: { readonly _tag: string; readonly message: string; readonly errorCode?: string }): Reason => ({
  tag: error._tag,
  ...(error.errorCode === undefined ? {} : { code: error.errorCode }),
  message: error.message
})

export const classify = (error: CallError, answer: { readonly status: number; readonly text: string } | undefined): Outcome => {
  switch (error._tag) {
    case "RequestTimeout":
    case "ServerError":
    case "MalformedResponse":
      return { _tag: "Lost", reason: reasonOf(error) }
    case "ConnectionFailed":
      // Refused: nothing reached the service.
      return error.reason === "refused" ? { _tag: "NotSent", reason: reasonOf(error) } : { _tag: "Lost", reason: reasonOf(error) }
    case "RateLimited":
    case "ExceededRateLimit":
    case "LockWaitExceeded":
      // docs/api-catalogue.md, Limits 2: a call over budget is refused, not applied.
      return { _tag: "NotSent", reason: reasonOf(error as { readonly _tag: string; readonly message: string }) }
    default:
      return { _tag: "Refused", error, status: answer?.status ?? 200, text: answer?.text ?? "" }
  }
}
