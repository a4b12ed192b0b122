/**
 * A command: a request to change data on the service (docs/architecture.md §4.31). Its kind
 * (`CommandKind` of @ocs/protocol) says which write it makes; its payload is checked against
 * the kind's Schema before anything is stored, every problem named by its field path.
 */
import { CommandKind, EngineRecordCommands, type Ids } from "@ocs/protocol"
import { Result, Schema, SchemaIssue } from "effect"
import * as Crypto from "node:crypto"

export type Requester = EngineRecordCommands.Requester
export type State = EngineRecordCommands.State
export type Reason = EngineRecordCommands.Reason

/** A command as its transitions left it. */
export interface Command {
  readonly id: string
  readonly tenant: Ids.TenantRef
  readonly kind: CommandKind.KindName
  readonly state: State
  readonly payload: unknown
  readonly requestedBy: Requester
  readonly idempotencyKey: string
  readonly fingerprint: string
  readonly marker: string | undefined
  readonly attempts: number
  readonly entityId: string | undefined
  /** The exact body of the last answer. */
  readonly lastAnswer: string | undefined
  readonly reason: Reason | undefined
  readonly evidence: string | undefined
  /** How a confirmation was reached: the service's answer, a read-back, or a person. */
  readonly confirmedBy: "answer" | "readBack" | "person" | undefined
  /**
   * Whether a confirmed command's effect was seen: in the copy, by a targeted read, or
   * `flagged` (the service does not show it); undefined while it is being looked for.
   */
  readonly seen: "copy" | "readBack" | "flagged" | undefined
  readonly requestedAt: number
  readonly updatedAt: number
}

/** The payload (or the kind) is not valid: nothing was stored. */
export class InvalidCommand extends Schema.TaggedError<InvalidCommand>()("InvalidCommand", {
  issues: Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String })),
  message: Schema.String
}) {}

/** The idempotency key names a command with another payload (HTTP 409). */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  idempotencyKey: Schema.String,
  commandId: Schema.String,
  message: Schema.String
}) {}

/** The copy of the business shows the command cannot succeed (an order handed to a carrier): refused before any call. */
export class PreconditionFailed extends Schema.TaggedError<PreconditionFailed>()("PreconditionFailed", {
  path: Schema.String,
  message: Schema.String
}) {}

export class CommandNotFound extends Schema.TaggedError<CommandNotFound>()("CommandNotFound", {
  commandId: Schema.String,
  message: Schema.String
}) {}

/** A person's decision (retry, mark done) asked of a command that is not in doubt. */
export class NotInDoubt extends Schema.TaggedError<NotInDoubt>()("NotInDoubt", {
  commandId: Schema.String,
  state: Schema.String,
  message: Schema.String
}) {}

/** A cancel asked of a command that has been sent already (or is final): only one not yet sent can be withdrawn. */
export class NotCancellable extends Schema.TaggedError<NotCancellable>()("NotCancellable", {
  commandId: Schema.String,
  state: Schema.String,
  message: Schema.String
}) {}

/** The tenant has no access the engine can send with (unknown, on hold, no token). */
export class NoAccess extends Schema.TaggedError<NoAccess>()("NoAccess", {
  appId: Schema.String,
  businessId: Schema.String,
  message: Schema.String
}) {}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const pathText = (path: ReadonlyArray<unknown> | undefined): string =>
  ["payload", ...(path ?? []).map((p) => String(typeof p === "object" && p !== null && "key" in p ? (p as { key: unknown }).key : p))].join(".")

const DECODE_OPTIONS = { errors: "all", onExcessProperty: "error" } as const
type Decoder = ReturnType<typeof Schema.decodeUnknownResult<Schema.Codec<unknown, unknown>>>
const decoders = new Map<CommandKind.KindName, Decoder>()
/** The payload decoder of a kind, made once (not once per command). */
const decoderOf = (kind: CommandKind.KindName): Decoder => {
  const known = decoders.get(kind)
  if (known !== undefined) return known
  const decode = Schema.decodeUnknownResult(CommandKind.kinds[kind].payload as Schema.Codec<unknown, unknown>)
  decoders.set(kind, decode)
  return decode
}

/**
 * Checks a kind and its payload: the decoded payload, or every problem by field path
 * (`payload.products.0.quantity`). Fields a kind does not know are refused too: a typo would
 * otherwise be dropped silently and the write would not do what was asked.
 */
export const validate = (kind: string, payload: unknown): Result.Result<{ readonly kind: CommandKind.KindName; readonly payload: unknown }, InvalidCommand> => {
  if (!CommandKind.isKindName(kind)) {
    return Result.fail(new InvalidCommand({
      issues: [{ path: "kind", message: `unknown kind; one of ${CommandKind.names.join(", ")}` }],
      message: `unknown command kind "${kind}"`
    }))
  }
  const decoded = decoderOf(kind)(payload, DECODE_OPTIONS)
  if (Result.isSuccess(decoded)) return Result.succeed({ kind, payload: decoded.success })
  const issues = formatter(decoded.failure.issue).issues.map((i) => ({ path: pathText(i.path), message: i.message }))
  return Result.fail(new InvalidCommand({ issues, message: `invalid ${kind}: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}` }))
}

/** JSON with object keys sorted, so two payloads equal as values have one text. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (typeof value === "bigint") return value.toString()
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/** What makes two requests "the same command": the kind and the payload as a value. */
export const fingerprint = (kind: string, payload: unknown): string =>
  Crypto.createHash("sha256").update(kind).update("\n").update(canonical(payload)).digest("hex")

/** The idempotency key of a plugin's command: its event and its own key (at-least-once + this = once). */
export const pluginKey = (plugin: string, eventId: string, key: string): string => `plugin:${plugin}:${eventId}:${key}`
