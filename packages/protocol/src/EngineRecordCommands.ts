/**
 * The records of the write path (docs/architecture.md §4.31): every transition of a command is
 * one record of the engine's own in the log (source "system", type `COMMAND_TYPE`), appended
 * durably before the engine moves on. The ledger of commands is the log; the read models
 * project these records into the command table, and the engine folds them at start to resume.
 *
 * Like the other engine records (EngineRecord.ts), each shape is declared once here, with its
 * encoder, a lenient reader (a record it cannot read is "absent", never an exception) and its
 * dedupe key.
 */
import { Option, Schema } from "effect"

/** Type of every command transition record (source "system"). */
export const COMMAND_TYPE = "ocs:command"

/** Who asked for a command: an admin key, a console session, or a plugin (by name). */
export const Requester = Schema.Struct({
  type: Schema.Literals(["admin", "console", "plugin"]),
  name: Schema.optionalKey(Schema.String)
})
export type Requester = typeof Requester.Type

/** Why a send failed or is in doubt: a tag a caller can act on, the API code when there is one. */
export const Reason = Schema.Struct({
  tag: Schema.String,
  code: Schema.optionalKey(Schema.String),
  message: Schema.String
})
export type Reason = typeof Reason.Type

/** A command was asked for: everything needed to send it, stored before anything is sent. */
export const Requested = Schema.Struct({
  state: Schema.Literal("requested"),
  command: Schema.String,
  kind: Schema.String,
  payload: Schema.Unknown,
  requestedBy: Requester,
  idempotencyKey: Schema.String,
  /** Digest of the canonical payload: a reused key with another payload is refused by it. */
  fingerprint: Schema.String,
  /** Written into a field the list operation returns, for kinds with no natural key. */
  marker: Schema.optionalKey(Schema.String)
})

/** An attempt is about to leave the process (appended before the request is written). */
export const Sent = Schema.Struct({ state: Schema.Literal("sent"), command: Schema.String, attempt: Schema.Int })

/**
 * Where a command sat in a call that carried several (product/add, customer/add coalesced):
 * `items` in the call, this one at `position` (from 0).
 */
export const CallShare = Schema.Struct({ items: Schema.Int, position: Schema.Int })
export type CallShare = typeof CallShare.Type

/**
 * The service answered the attempt: the exact body, and the entity's id when it names one. For
 * a call that carried several commands (`call`), `body` is this command's own entry of the
 * answer's data (a refusal keeps the exact body): the whole body once per item would repeat it
 * a hundred times in the log.
 */
export const Answered = Schema.Struct({
  state: Schema.Literal("answered"),
  command: Schema.String,
  attempt: Schema.Int,
  status: Schema.Int,
  body: Schema.String,
  entityId: Schema.optionalKey(Schema.String),
  call: Schema.optionalKey(CallShare)
})

/** Final: the service refused it, or it was refused before a call. */
export const Failed = Schema.Struct({
  state: Schema.Literal("failed"),
  command: Schema.String,
  attempt: Schema.optionalKey(Schema.Int),
  reason: Reason
})

/** The attempt's answer was lost: it may or may not have taken effect. `evidence`: what the engine saw. */
export const InDoubt = Schema.Struct({
  state: Schema.Literal("inDoubt"),
  command: Schema.String,
  attempt: Schema.Int,
  reason: Reason,
  evidence: Schema.optionalKey(Schema.String)
})

/** Final: the effect exists on the service (its id when known). */
export const Confirmed = Schema.Struct({
  state: Schema.Literal("confirmed"),
  command: Schema.String,
  entityId: Schema.optionalKey(Schema.String),
  by: Schema.Literals(["answer", "readBack", "person"]),
  evidence: Schema.optionalKey(Schema.String)
})

/**
 * A confirmed command's effect shows where the engine looks for it (docs/architecture.md §4.31):
 * in the copy (a webhook or a pull of the entity, with the fields it set) or, once the copy has
 * not shown it within the bound, by a targeted read of the service. The state stays confirmed.
 */
export const Seen = Schema.Struct({
  state: Schema.Literal("seen"),
  command: Schema.String,
  by: Schema.Literals(["copy", "readBack"]),
  evidence: Schema.String
})

/**
 * Flagged: answered as applied, but neither the copy within the bound nor a targeted read of the
 * service shows the effect (`reason.tag` NotSeen, or ReadBackFailed when the read could not answer).
 */
export const NotSeen = Schema.Struct({ state: Schema.Literal("notSeen"), command: Schema.String, reason: Reason, evidence: Schema.String })

/** A person sends an in-doubt command again (their decision: the effect may be doubled). */
export const Retried = Schema.Struct({ state: Schema.Literal("retried"), command: Schema.String, afterAttempt: Schema.Int, by: Schema.String })

/** Final: withdrawn before any attempt could take effect. */
export const Cancelled = Schema.Struct({ state: Schema.Literal("cancelled"), command: Schema.String, by: Schema.String })

export const Transition = Schema.Union([Requested, Sent, Answered, Failed, InDoubt, Confirmed, Retried, Cancelled, Seen, NotSeen])
export type Transition = typeof Transition.Type
export type TransitionState = Transition["state"]
export type TransitionOf<S extends TransitionState> = Extract<Transition, { readonly state: S }>

/** The states a command can be in (what the read model and the engine agree on). */
export type State = "pending" | "sending" | "inDoubt" | "confirmed" | "failed" | "cancelled"

export const isFinal = (state: State): boolean => state === "confirmed" || state === "failed" || state === "cancelled"

/** The state a transition moves its command to. */
export const stateAfter = (t: Transition): State => {
  switch (t.state) {
    case "requested":
    case "retried":
      return "pending"
    case "sent":
    case "answered":
      return "sending"
    case "inDoubt":
      return "inDoubt"
    case "confirmed":
    case "seen":
    case "notSeen":
      return "confirmed"
    case "failed":
      return "failed"
    case "cancelled":
      return "cancelled"
  }
}

export const encode = (t: Transition): string => JSON.stringify(t)

const decodeTransition = Schema.decodeUnknownOption(Transition)

/** A transition from a record's parsed body; None for a body of another shape. */
export const decode = (body: unknown): Option.Option<Transition> => decodeTransition(body)

/** A transition from a record's text; None when it is not JSON or not a transition. */
export const decodeText = (text: string): Option.Option<Transition> => {
  try {
    return decode(JSON.parse(text))
  } catch {
    return Option.none()
  }
}

/**
 * The dedupe key of a transition. The request is keyed by the tenant's idempotency key, so two
 * requests racing with one key append once and the loser is answered with the winner's record;
 * an attempt is sent once per number; a final state is reached once.
 */
export const dedupeKey = (tenantKey: string, t: Transition): string => {
  switch (t.state) {
    case "requested":
      return `command:${tenantKey}:${t.idempotencyKey}`
    case "sent":
    case "answered":
      return `command-${t.state}:${t.command}:${t.attempt}`
    case "inDoubt":
      // One attempt can be in doubt for several reasons in turn (lost, then unreadable back).
      return `command-inDoubt:${t.command}:${t.attempt}:${t.reason.tag}`
    case "failed":
    case "confirmed":
    case "cancelled":
      return `command-final:${t.command}`
    case "retried":
      return `command-retried:${t.command}:${t.afterAttempt}`
    case "seen":
    case "notSeen":
      return `command-seen:${t.command}`
  }
}

/** Meta of a transition record: its state, so audit tools filter without parsing bodies. */
export const meta = (t: Transition): Record<string, unknown> => ({ command: t.command, state: t.state })
