/**
 * The write path's engine (docs/architecture.md §4.31): takes commands, stores each request in
 * the log before anything else, sends them through the transport's scheduler on their own
 * budget keys (one per write URL, interactive priority, never during a lock), and records every
 * transition before moving on.
 *
 * A send whose answer is lost (timeout, reset, 5xx, an answer that is no envelope) is *in
 * doubt*: the engine never sends it again blindly. It resolves it by reading back: kinds the
 * service deduplicates (order/add by appOrderId) or that set values (edits) are sent again; the
 * others are looked for with a targeted list read, by their natural key or by the marker the
 * engine wrote into their description. Found: confirmed with the service's id; provably
 * absent: sent again; the read failing: the command stays in doubt and a person decides
 * (`retry`, `markDone`), with what the engine saw.
 *
 * At start the engine folds the log (`CommandLedger.load`): pending commands are sent, and an
 * attempt that was in flight when the process died is in doubt, resolved like any other.
 */
import { EventLog, type EventLogError as LogErrors } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import { CommandKind, EngineRecordCommands, Ids, Json, Records } from "@ocs/protocol"
import { CommerceClient as Client } from "@ocs/transport"
import { Clock, Context, Deferred, Duration, Effect, Exit, Layer, Option, Semaphore, Stream } from "effect"
import * as Crypto from "node:crypto"
import {
  type Command, CommandNotFound, fingerprint, IdempotencyKeyReused, type InvalidCommand, NoAccess, NotCancellable, NotInDoubt, PreconditionFailed, type Requester,
  validate
} from "./Command.ts"
import * as Ledger from "./CommandLedger.ts"
import { CommandOwnership } from "./CommandOwnership.ts"
import * as Grant from "./Grant.ts"
import * as Coalescer from "./internal/coalescer.ts"
import * as OrderEdit from "./internal/orderEdit.ts"
import * as Shared from "./internal/sharedLedger.ts"
import { classify, type Outcome, reasonOf } from "./internal/outcome.ts"

type EventLogError = LogErrors.EventLogError
type CallError = Client.CallError
type TenantAccess = Client.TenantAccess

/** Where the engine gets a tenant's token from (the host's tenant registry). */
export class CommandTenants extends Context.Service<CommandTenants, {
  readonly access: (tenant: Ids.TenantRef) => Effect.Effect<TenantAccess, NoAccess>
  /**
   * The tenant's grant (permissions and depots it ticked when it connected): a command outside
   * it is refused before anything is stored (`Grant.ts`). None, or omitted: scopes unknown,
   * nothing checked (the service answers ERR_403 or ERR_INVALID_DEPOT_ID by calling).
   */
  readonly grant?: ((tenant: Ids.TenantRef) => Effect.Effect<Option.Option<Grant.Grant>>) | undefined
}>()("@ocs/commands/CommandTenants") {}

/**
 * What the engine reads of the business's copy (the read models): an order's status, to refuse
 * a command the service would refuse before any call; an entity's id by its natural key
 * (appProductId, appOrderId), to resolve a lost answer or a duplicate refusal without reading
 * the service. Optional: without it, the service refuses and the command fails on its answer,
 * and every doubt is resolved by a targeted read.
 */
export class CommandCopy extends Context.Service<CommandCopy, {
  readonly orderStatus: (tenant: Ids.TenantRef, orderId: string) => Effect.Effect<Option.Option<string>>
  readonly entityId: (tenant: Ids.TenantRef, entity: "product" | "order", key: string) => Effect.Effect<Option.Option<string>>
  /** The copy's record of an entity (as the service listed or announced it), live ones only. */
  readonly record: (tenant: Ids.TenantRef, entity: CommandKind.Verify<unknown>["entity"], id: string) => Effect.Effect<Option.Option<unknown>>
}>()("@ocs/commands/CommandCopy") {
  /** The copy as the read models hold it (a read that fails knows nothing, so refuses nothing). */
  static readonly layerReadModels: Layer.Layer<CommandCopy, never, ReadModels.ReadModels> = Layer.effect(
    CommandCopy,
    Effect.map(ReadModels.ReadModels, (rm) =>
      CommandCopy.of({
        orderStatus: (tenant, orderId) =>
          rm.order(tenant, orderId).pipe(
            Effect.map(Option.flatMap((o) => (o.deleted ? Option.none() : Option.fromNullishOr(o.status)))),
            Effect.orElseSucceed(() => Option.none<string>())
          ),
        entityId: (tenant, entity, key) =>
          rm.idMap(tenant, entity, { keys: [key] }).pipe(
            Effect.map((page) => Option.fromUndefinedOr(page.items.find((m) => !m.deleted)?.id)),
            Effect.orElseSucceed(() => Option.none<string>())
          ),
        record: (tenant, entity, id) => {
          const read: Effect.Effect<Option.Option<{ readonly record: unknown; readonly deleted: boolean }>, unknown> =
            entity === "product" ? rm.product(tenant, id) : entity === "order" ? rm.order(tenant, id) : entity === "customer" ? rm.customer(tenant, id) : rm.bill(tenant, id)
          return read.pipe(
            Effect.map(Option.flatMap((r) => (r.deleted ? Option.none() : Option.some(r.record)))),
            Effect.orElseSucceed(() => Option.none<unknown>())
          )
        }
      }))
  )
}

export interface Options {
  /** Sends of one command at most, the first included (default 5). Past it: failed, or left in doubt. */
  readonly maxAttempts?: number | undefined
  /**
   * How long to wait after a lost answer before reading back (default 2 s): a request the
   * service is still working on must have landed before its absence means anything.
   */
  readonly settleMs?: number | undefined
  /** Targeted reads tried before a doubt is left to a person (default 3). */
  readonly readBackAttempts?: number | undefined
  /**
   * Ignored (kept so existing configurations still load). A command waiting for its key's budget
   * holds nothing: it waits in its write lane and in the scheduler, and the calls in flight are
   * bounded by the scheduler's `maxInFlight`, a slot taken only while a call is on the wire.
   */
  readonly concurrency?: number | undefined
  /**
   * How long the first queued product.add / customer.add waits for others of its tenant before a
   * call that is not full goes out (default 20 ms). Under load calls fill while the lane is busy.
   */
  readonly coalesceMs?: number | undefined
  /**
   * How long a command confirmed by the service's answer may take to show in the copy (webhook
   * or pull) before a targeted read looks for it (default 120 s). Needs `CommandCopy`.
   */
  readonly seenWithinMs?: number | undefined
}

export interface SubmitRequest {
  readonly tenant: Ids.TenantRef
  readonly kind: string
  readonly payload: unknown
  readonly requestedBy: Requester
  readonly idempotencyKey: string
}

export interface Submitted {
  readonly command: Command
  /** False when the key named an existing command with the same payload (nothing new stored). */
  readonly created: boolean
}

export interface ListOptions {
  readonly state?: EngineRecordCommands.State | undefined
  readonly kind?: string | undefined
}

export interface CommandEngineService {
  /** Validates, stores the request durably, and queues it; the same key and payload answer the same command. */
  readonly submit: (request: SubmitRequest) => Effect.Effect<Submitted, InvalidCommand | IdempotencyKeyReused | Grant.NotGranted | PreconditionFailed | EventLogError>
  readonly get: (tenant: Ids.TenantRef, id: string) => Effect.Effect<Option.Option<Command>>
  readonly list: (tenant: Ids.TenantRef, options?: ListOptions) => Effect.Effect<ReadonlyArray<Command>>
  /** Waits for the command's final state (confirmed, failed, cancelled) or its being left in doubt. */
  readonly outcome: (tenant: Ids.TenantRef, id: string) => Effect.Effect<Command, CommandNotFound>
  /** A person's decision on an in-doubt command: send it again (the effect may be doubled). */
  readonly retry: (tenant: Ids.TenantRef, id: string, by: string) => Effect.Effect<Command, CommandNotFound | NotInDoubt | EventLogError>
  /** A person's decision on an in-doubt command: it took effect (with the service's id when they know it). */
  readonly markDone: (
    tenant: Ids.TenantRef,
    id: string,
    decision: { readonly by: string; readonly entityId?: string | undefined; readonly note?: string | undefined }
  ) => Effect.Effect<Command, CommandNotFound | NotInDoubt | EventLogError>
  /** Withdraws a command not sent yet (requested, waiting for its turn): cancelled, never sent. */
  readonly cancel: (tenant: Ids.TenantRef, id: string, by: string) => Effect.Effect<Command, CommandNotFound | NotCancellable | EventLogError>
  /** Counts by state, all tenants (metrics, tests). */
  readonly counts: Effect.Effect<Readonly<Record<EngineRecordCommands.State, number>>>
  /** What `/metrics` publishes of the write path. */
  readonly metrics: Effect.Effect<CommandMetrics>
}

/** The write path's series (docs/architecture.md §4.31), all tenants. */
export interface CommandMetrics {
  readonly byKindAndState: ReadonlyArray<{ readonly kind: string; readonly state: EngineRecordCommands.State; readonly count: number }>
  readonly inDoubt: number
  /** In doubt and left to a person (retry or mark done). */
  readonly waitingForAPerson: number
  /** Confirmed, but the service does not show the effect. */
  readonly flagged: number
  /** Commands waiting for their write lane (one call per tenant and URL) or for a coalesced call. */
  readonly laneQueue: number
  /** Write lanes with a call in flight. */
  readonly laneBusy: number
}

export class CommandEngine extends Context.Service<CommandEngine, CommandEngineService>()("@ocs/commands/CommandEngine") {
  /** Loads the ledger from the log, resumes what was left, and sends from then on; stops with its scope. */
  static readonly layer = (options: Options = {}) => Layer.effect(CommandEngine, make(options))
}

/** An ERR_INVALID_FORM_FIELDS naming the kind's natural key as taken: the effect exists already. */
const refusedAsDuplicate = (error: CallError, kind: CommandKind.CommandKind<unknown>): boolean => {
  if (error._tag !== "InvalidFormFields") return false
  const key = kind.kind === "order.add" ? "appOrderId" : kind.kind === "product.add" ? "appProductId" : undefined
  return key !== undefined && Object.keys(error.fields).some((f) => f.endsWith(key))
}

/**
 * The reasons of a doubt the engine leaves to a person: its read-back could not tell, or every
 * attempt of a kind it may send again was lost. Any other doubt is still being resolved.
 */
export const LEFT_TO_A_PERSON: ReadonlySet<string> = new Set(["ReadBackFailed", "AttemptsExhausted"])

/** Whether the command waits for a person's decision (retry, mark done). */
export const waitsForAPerson = (c: Command): boolean => c.state === "inDoubt" && LEFT_TO_A_PERSON.has(c.reason?.tag ?? "")

const resumable = (c: Command): boolean => c.state === "pending" || c.state === "sending" || (c.state === "inDoubt" && !waitsForAPerson(c))

const emptyCounts = (): Record<EngineRecordCommands.State, number> => ({ pending: 0, sending: 0, inDoubt: 0, confirmed: 0, failed: 0, cancelled: 0 })

export const make = Effect.fnUntraced(function*(options: Options) {
  const client = yield* Client.CommerceClient
  const tenants = yield* CommandTenants
  const maxAttempts = options.maxAttempts ?? 5
  const settle = Duration.millis(options.settleMs ?? 2000)
  const readBackAttempts = options.readBackAttempts ?? 3
  const copy = yield* Effect.serviceOption(CommandCopy)
  // Several servers on one ledger (internal/sharedLedger.ts): with an ownership, the engine
  // follows the log's command records and sends only the commands of the tenants it owns.
  const ownership = yield* Effect.serviceOption(CommandOwnership)
  const ownLog = yield* Effect.context<EventLog.EventLog>()
  const positions = new Shared.Positions()
  const shared = Option.isNone(ownership) ? undefined : Shared.make({ owns: ownership.value.owns }, Context.get(ownLog, EventLog.EventLog), positions)
  const context = shared === undefined ? ownLog : Context.add(ownLog, EventLog.EventLog, shared.appending)

  /** Preconditions from the copy (docs/api-catalogue.md §3.4): nothing stored, nothing sent. */
  const precondition = (tenant: Ids.TenantRef, kind: CommandKind.KindName, payload: unknown): Effect.Effect<void, PreconditionFailed> =>
    Effect.gen(function*() {
      if (kind !== "order.edit" || Option.isNone(copy)) return
      const edit = payload as CommandKind.OrderEdit
      const orderId = String(edit.info.id)
      const status = yield* copy.value.orderStatus(tenant, orderId)
      if (Option.isNone(status)) return
      const why = OrderEdit.forbiddenMove(status.value, edit.info.status)
      if (why !== undefined) {
        return yield* new PreconditionFailed({
          path: CommandKind.ORDER_NOT_EDITABLE.has(status.value) ? "payload.info.id" : "payload.info.status",
          message: `order ${orderId} ${why} (the copy)`
        })
      }
    })

  /** The tenant's grant (docs/architecture.md §4.32): a permission or depot it lacks refuses the command. */
  const granted = (tenant: Ids.TenantRef, kind: CommandKind.KindName, payload: unknown): Effect.Effect<void, Grant.NotGranted> =>
    tenants.grant === undefined ? Effect.void : Effect.flatMap(tenants.grant(tenant), (grant) => {
      const refused = Option.isSome(grant) ? Grant.check(kind, payload, grant.value) : undefined
      return refused === undefined ? Effect.void : Effect.fail(refused)
    })

  // Alone: through the log's direct append when it has one. Several servers: through the shared
  // ledger's log, which marks the records this server appended (internal/sharedLedger.ts).
  const appendAll: Ledger.Appender = shared === undefined
    ? yield* Ledger.appender
    : (tenant, ts) => Effect.provide(Ledger.appendAll(tenant, ts), context)
  const commands = yield* Ledger.load(shared === undefined ? undefined : (r) => void positions.see(r))
  const byKey = new Map<string, string>()
  const keyOf = (tenant: Ids.TenantRef, key: string) => `${Ids.tenantKey(tenant)}\u0000${key}`
  for (const c of commands.values()) byKey.set(keyOf(c.tenant, c.idempotencyKey), c.id)
  const waiters = new Map<string, Array<Deferred.Deferred<Command>>>()
  /** Commands whose first send has begun: no longer cancellable (checked and set without a yield between). */
  const claimed = new Set<string>()
  /** Commands being driven now; one left in doubt by its drive waits for a person. */
  const running = new Set<string>()
  /** Answers the command's waiters with its state now (synchronous: no effect per transition). */
  const wakeNow = (id: string): void => {
    const c = commands.get(id)
    const ws = waiters.get(id)
    if (c === undefined || ws === undefined) return
    waiters.delete(id)
    for (const w of ws) Deferred.doneUnsafe(w, Exit.succeed(c))
  }
  const wake = (id: string) => Effect.sync(() => wakeNow(id))
  const scope = yield* Effect.scope

  /**
   * Appends transitions of one command (durable, in one commit), then moves the command in memory
   * and wakes its waiters. Several only when nothing happens between them (an answer and its
   * confirmation): one commit instead of two.
   */
  const transitions = (command: Command, ts: ReadonlyArray<EngineRecordCommands.Transition>): Effect.Effect<Command, EventLogError> =>
    Effect.map(appendAll(command.tenant, ts), ({ at }) => {
      let next = commands.get(command.id) ?? command
      for (const t of ts) next = Ledger.step(next, command.tenant, t, at)!
      commands.set(next.id, next)
      if (EngineRecordCommands.isFinal(next.state)) wakeNow(next.id)
      return next
    })

  /** Appends a transition (durable), then moves the command in memory and wakes its waiters. */
  const transition = (command: Command, t: EngineRecordCommands.Transition) => transitions(command, [t])

  /**
   * One call in flight per write key (tenant + URL): a call already on the wire when another one
   * is answered ERR_429 would reach the service during the lock. The write lane waits instead.
   */
  const lanes = new Map<string, { readonly lock: Semaphore.Semaphore; users: number }>()
  const inLane = <A, E>(key: string, effect: Effect.Effect<A, E>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const lane = lanes.get(key) ?? { lock: Semaphore.makeUnsafe(1), users: 0 }
        lane.users++
        lanes.set(key, lane)
        return lane
      }),
      (lane) => lane.lock.withPermit(effect),
      (lane) =>
        Effect.sync(() => {
          if (--lane.users === 0) lanes.delete(key)
        })
    )

  const laneOf = (tenant: Ids.TenantRef, kind: CommandKind.CommandKind<unknown>) => `${Ids.tenantKey(tenant)}:${kind.operation.path}`

  /** One call of a kind's write, through the tenant's write lane of its URL. */
  const callOnce = (tenant: Ids.TenantRef, access: TenantAccess, kind: CommandKind.CommandKind<unknown>, body: unknown) =>
    inLane(laneOf(tenant, kind), callBare(access, kind, body))

  /** One call (the caller holds the write lane). */
  const callBare = (access: TenantAccess, kind: CommandKind.CommandKind<unknown>, body: unknown) =>
    Effect.gen(function*() {
      let answer: { readonly status: number; readonly text: string } | undefined
      const result = yield* client.call(access, kind.operation, body, {
        priority: "interactive",
        retryTransient: false,
        onAnswer: (a) => (answer = a)
      }).pipe(Effect.result)
      if (result._tag === "Success") return { _tag: "Answered", data: result.success.data, text: result.success.text, status: answer?.status ?? 200 } as Outcome
      return classify(result.failure, answer)
    })

  const coalescer = Coalescer.make({
    lingerMs: options.coalesceMs ?? 20,
    send: callOnce
  }, scope)

  /**
   * The body of one call. `order.edit` sends only what the copy does not already show: a field
   * sent empty clears data on the service (docs/api-catalogue.md §3.4).
   */
  const bodyOf = (command: Command, kind: CommandKind.CommandKind<unknown>): Effect.Effect<unknown> => {
    const asked = kind.body(command.payload, command.marker)
    if (command.kind !== "order.edit" || Option.isNone(copy)) return Effect.succeed(asked)
    const edit = command.payload as CommandKind.OrderEdit
    return Effect.map(copy.value.record(command.tenant, "order", String(edit.info.id)), (record) =>
      Option.isNone(record) ? asked : OrderEdit.trim(edit, record.value).body)
  }

  /**
   * One attempt: its `sent` recorded, then the call. A kind that takes several items a call
   * records it and joins the tenant's next call of it. Any other records it once it holds its
   * write lane, so a command waiting for its turn (or for its key's budget behind the lane)
   * holds nothing, stays cancellable, and a crash leaves at most one attempt per lane in doubt.
   * Undefined: a cancel won the race to the first send, nothing went out.
   */
  const attemptOnce = (command: Command, access: TenantAccess, kind: CommandKind.CommandKind<unknown>, attempt: number) => {
    const claim = Effect.suspend(() => {
      // The check and the claim with no yield between: a cancel never races a send.
      if (commands.get(command.id)?.state === "cancelled") return Effect.succeed(undefined)
      claimed.add(command.id)
      return transition(command, { state: "sent", command: command.id, attempt })
    })
    const send = (sent: Command) =>
      kind.batch !== undefined
        ? coalescer.attempt(sent, access, kind, kind.batch)
        : Effect.flatMap(bodyOf(sent, kind), (body) => callBare(access, kind, body))
    const go = Effect.flatMap(shared === undefined ? claim : fenced(command, attempt, claim), (sent) => sent === undefined ? Effect.succeed(undefined) : Effect.map(send(sent), (outcome) => ({ sent, outcome })))
    return kind.batch !== undefined ? go : inLane(laneOf(command.tenant, kind), go)
  }

  /**
   * A shared ledger's claim of an attempt (internal/sharedLedger.ts): only by the tenant's owner,
   * and it goes out only once the log shows its `sent` first. Undefined: nothing goes out here.
   */
  const fenced = (command: Command, attempt: number, claim: Effect.Effect<Command | undefined, EventLogError>) =>
    Effect.suspend(() => {
      if (shared === undefined) return claim
      if (!shared.owns(command.tenant)) return Effect.succeed(undefined)
      return Effect.flatMap(claim, (sent) =>
        sent === undefined ? Effect.succeed(undefined) : Effect.map(shared.fence(command.id, attempt), (ours) => (ours ? sent : undefined)))
    })

  /** The effect's id in the copy, by the kind's natural key (no call); none without a copy or a key. */
  const inCopy = (command: Command, kind: CommandKind.CommandKind<unknown>) =>
    Effect.gen(function*() {
      if (Option.isNone(copy) || kind.copy === undefined) return Option.none<{ readonly id: string; readonly evidence: string }>()
      const key = kind.copy.key(command.payload)
      const id = yield* copy.value.entityId(command.tenant, kind.copy.entity, key)
      return Option.map(id, (id) => ({ id, evidence: `the copy maps ${kind.copy!.entity} ${key} to id ${id}` }))
    })

  /** A targeted read for a kind without a safe resend: found (with the id), absent, or cannot tell. */
  const readBack = (command: Command, access: TenantAccess, identity: CommandKind.ListRead) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const filters = identity.filters(command.payload, command.marker, { fromMs: command.requestedAt, toMs: now })
      const where = `${identity.operation.resource}/${identity.operation.operation} ${JSON.stringify(filters)} by ${identity.by}`
      const found = yield* client.pages(access, identity.operation, { filters, priority: "interactive" }).pipe(
        Stream.flatMap((page) => Stream.fromIterable(page.records)),
        Stream.filter((r) => identity.matches(r, command.payload, command.marker)),
        Stream.runHead,
        Effect.result
      )
      if (found._tag === "Failure") return { _tag: "Unknown", evidence: `${where}: ${found.failure._tag}: ${found.failure.message}` } as const
      if (Option.isNone(found.success)) return { _tag: "Absent", evidence: `${where}: not found` } as const
      const id = Records.recordId(found.success.value, identity.operation.entity?.idField ?? "id")
      return { _tag: "Found", id, evidence: `${where}: found id ${id ?? "?"}` } as const
    })

  type ReadOutcome = { readonly _tag: "Found" | "Absent" | "Unknown"; readonly id?: string | undefined; readonly evidence: string }
  /** Doubts of coalesced kinds waiting to be read back together, by tenant and kind. */
  const readBackGroups = new Map<string, Array<{ readonly command: Command; readonly done: Deferred.Deferred<ReadOutcome> }>>()

  /**
   * The items of a lost coalesced call (product/add, customer/add: up to 100) read back together:
   * one paged read of the kind's list by update time (from the earliest request to now, 300 s
   * either side for the clocks), each item matched by its key, instead of one read per item on
   * the list's budget. Doubts arriving within `coalesceMs` of each other share the read.
   */
  const readBackTogether = (command: Command, access: TenantAccess, kind: CommandKind.CommandKind<unknown>, identity: CommandKind.ListRead) =>
    Effect.gen(function*() {
      const key = `${Ids.tenantKey(command.tenant)}\u0000${kind.kind}`
      const done = yield* Deferred.make<ReadOutcome>()
      const existing = readBackGroups.get(key)
      const group = existing ?? []
      group.push({ command, done })
      if (existing === undefined) {
        readBackGroups.set(key, group)
        yield* Effect.forkIn(Effect.sleep(Duration.millis(options.coalesceMs ?? 20)).pipe(
          Effect.andThen(Effect.suspend(() => {
            readBackGroups.delete(key)
            return readGroup(group, access, kind, identity)
          }))
        ), scope)
      }
      return yield* Deferred.await(done)
    })

  const readGroup = (
    group: ReadonlyArray<{ readonly command: Command; readonly done: Deferred.Deferred<ReadOutcome> }>,
    access: TenantAccess,
    kind: CommandKind.CommandKind<unknown>,
    identity: CommandKind.ListRead
  ) =>
    Effect.gen(function*() {
      if (group.length === 1) {
        yield* Deferred.succeed(group[0]!.done, yield* readBack(group[0]!.command, access, identity))
        return
      }
      const now = yield* Clock.currentTimeMillis
      const from = Math.min(...group.map((g) => g.command.requestedAt))
      const filters = { updatedAtFrom: Math.floor(from / 1000) - 300, updatedAtTo: Math.ceil(now / 1000) + 300 }
      const where = `${identity.operation.resource}/${identity.operation.operation} ${JSON.stringify(filters)} (${group.length} items read together) by ${identity.by}`
      const found = new Map<string, string | undefined>()
      const read = yield* client.pages(access, identity.operation, { filters, priority: "interactive" }).pipe(
        Stream.runForEach((page) =>
          Effect.sync(() => {
            for (const r of page.records) {
              for (const g of group) {
                if (!found.has(g.command.id) && identity.matches(r, g.command.payload, g.command.marker)) {
                  found.set(g.command.id, Records.recordId(r, identity.operation.entity?.idField ?? "id"))
                }
              }
            }
          })
        ),
        Effect.result
      )
      for (const g of group) {
        const mine = `${where} ${kind.batch?.key(g.command.payload) ?? ""}`
        const outcome: ReadOutcome = read._tag === "Failure"
          ? { _tag: "Unknown", evidence: `${mine}: ${read.failure._tag}: ${read.failure.message}` }
          : found.has(g.command.id)
          ? { _tag: "Found", id: found.get(g.command.id), evidence: `${mine}: found id ${found.get(g.command.id) ?? "?"}` }
          : { _tag: "Absent", evidence: `${mine}: not found` }
        yield* Deferred.succeed(g.done, outcome)
      }
    })

  const seenWithin = options.seenWithinMs ?? 120_000
  /**
   * Confirmation by the copy (docs/architecture.md §4.31): a command the service answered as
   * applied is seen when the copy (webhook or pull) shows its entity with the fields it set. Not
   * seen within the bound: a targeted read of the service decides, and flags it when the
   * service does not show it either. Looks grow apart (250 ms doubling to 10 s): cheap reads of
   * the copy by primary key.
   */
  const lookForEffect = (command: Command): Effect.Effect<void, EventLogError> =>
    Effect.gen(function*() {
      const kind = CommandKind.find(command.kind)
      const id = command.entityId
      if (Option.isNone(copy) || kind === undefined || id === undefined) return
      const verify = kind.verify
      const deadline = command.updatedAt + seenWithin
      let pause = 250
      while ((yield* Clock.currentTimeMillis) < deadline) {
        const record = yield* copy.value.record(command.tenant, verify.entity, id)
        if (Option.isSome(record) && verify.shows(record.value, command.payload, id)) {
          yield* transition(command, { state: "seen", command: command.id, by: "copy", evidence: `the copy shows ${verify.entity} ${id} with the fields set` })
          return
        }
        yield* Effect.sleep(Duration.millis(pause))
        pause = Math.min(10_000, pause * 2)
      }
      const filters = verify.filters(command.payload, id)
      const where = `${verify.operation.resource}/${verify.operation.operation} ${Json.stringify(filters)}`
      const access = yield* tenants.access(command.tenant).pipe(Effect.result)
      if (access._tag === "Failure") {
        yield* transition(command, { state: "notSeen", command: command.id, reason: { tag: "ReadBackFailed", message: access.failure.message }, evidence: `not in the copy after ${seenWithin} ms; no access to read back` })
        return
      }
      const found = yield* client.pages(access.success, verify.operation, { filters, priority: "interactive" }).pipe(
        Stream.flatMap((page) => Stream.fromIterable(page.records)),
        Stream.filter((r) => verify.shows(r, command.payload, id)),
        Stream.runHead,
        Effect.result
      )
      if (found._tag === "Failure") {
        yield* transition(command, { state: "notSeen", command: command.id, reason: { tag: "ReadBackFailed", message: found.failure.message }, evidence: `not in the copy after ${seenWithin} ms; ${where}: ${found.failure._tag}` })
      } else if (Option.isSome(found.success)) {
        yield* transition(command, { state: "seen", command: command.id, by: "readBack", evidence: `not in the copy after ${seenWithin} ms; ${where}: shown` })
      } else {
        yield* transition(command, {
          state: "notSeen",
          command: command.id,
          reason: { tag: "NotSeen", message: "answered as applied, but the service does not show the effect" },
          evidence: `not in the copy after ${seenWithin} ms; ${where}: not shown`
        })
      }
    })

  const watchForEffect = (command: Command) =>
    // Nothing to look for (no copy, no id): no fiber.
    Option.isNone(copy) || command.entityId === undefined ? Effect.void : Effect.forkIn(lookForEffect(command).pipe(Effect.catchCause((cause) => Effect.logWarning("CommandEngine: looking for a command's effect failed", cause))), scope)

  /** Sends the command until it is final or left in doubt. `inDoubt`: the last attempt's answer was lost. */
  const drive = (initial: Command): Effect.Effect<void, EventLogError> =>
    Effect.gen(function*() {
      let command = initial
      const kind = CommandKind.find(command.kind)!
      const access = yield* tenants.access(command.tenant).pipe(Effect.result)
      if (access._tag === "Failure") {
        if (command.state === "pending") {
          yield* transition(command, { state: "failed", command: command.id, reason: reasonOf(access.failure) })
        }
        // An attempt in flight with no access now: a person decides (nothing can be read back).
        else if (command.state === "sending") {
          yield* transition(command, { state: "inDoubt", command: command.id, attempt: command.attempts, reason: reasonOf(access.failure) })
        }
        return
      }
      // A crash during an attempt: its answer is lost, like any other.
      if (command.state === "sending") {
        command = yield* transition(command, {
          state: "inDoubt",
          command: command.id,
          attempt: command.attempts,
          reason: { tag: "Interrupted", message: "the engine stopped while the attempt was in flight" }
        })
      }
      let notSent = 0
      // Whether the command's last attempt may have taken effect (its answer was lost).
      let doubtful = command.state === "inDoubt"
      while (true) {
        if (doubtful && kind.identity._tag === "list") {
          // Resolve by reading back, never by a blind resend: the copy first (no call), then the service.
          const copied = yield* inCopy(command, kind)
          if (Option.isSome(copied)) {
            yield* transition(command, { state: "confirmed", command: command.id, by: "readBack", entityId: copied.value.id, evidence: copied.value.evidence })
            return
          }
          yield* Effect.sleep(settle)
          let outcome: ReadOutcome = { _tag: "Unknown", evidence: "" }
          for (let i = 0; i < readBackAttempts; i++) {
            outcome = kind.batch !== undefined
              ? yield* readBackTogether(command, access.success, kind, kind.identity)
              : yield* readBack(command, access.success, kind.identity)
            if (outcome._tag !== "Unknown") break
            yield* Effect.sleep(settle)
          }
          if (outcome._tag === "Found") {
            yield* transition(command, { state: "confirmed", command: command.id, by: "readBack", evidence: outcome.evidence, ...(outcome.id === undefined ? {} : { entityId: outcome.id }) })
            return
          }
          if (outcome._tag === "Unknown") {
            // Cannot tell: it stays in doubt with what was seen, for a person.
            yield* transition(command, { state: "inDoubt", command: command.id, attempt: command.attempts, reason: { tag: "ReadBackFailed", message: "the targeted read could not answer" }, evidence: outcome.evidence })
            return
          }
          // Provably absent: sent again.
        }
        // Kinds the service makes safe to send again (order/add by appOrderId, edits) go on without a read.
        if (command.attempts - notSent >= maxAttempts) {
          if (doubtful && kind.identity._tag === "resend") {
            yield* transition(command, {
              state: "inDoubt",
              command: command.id,
              attempt: command.attempts,
              reason: { tag: "AttemptsExhausted", message: `every one of ${command.attempts} attempts lost its answer` },
              evidence: `last: ${command.reason?.tag ?? "?"}: ${command.reason?.message ?? ""}`
            })
            return
          }
          yield* transition(command, { state: "failed", command: command.id, attempt: command.attempts, reason: { tag: "AttemptsExhausted", message: `${command.attempts} attempts, none took effect` } })
          return
        }
        const attempt = command.attempts + 1
        const attempted = yield* attemptOnce(command, access.success, kind, attempt)
        // A cancel won the race to the first send: nothing goes out.
        if (attempted === undefined) return
        command = attempted.sent
        const outcome = attempted.outcome
        switch (outcome._tag) {
          case "Answered": {
            const entityId = kind.entityId(outcome.data, command.payload)
            // The answer and the confirmation it makes: one commit.
            const confirmed = yield* transitions(command, [{
              state: "answered",
              command: command.id,
              attempt,
              status: outcome.status,
              body: outcome.text,
              ...(entityId === undefined ? {} : { entityId }),
              ...(outcome.call === undefined ? {} : { call: outcome.call })
            }, { state: "confirmed", command: command.id, by: "answer", ...(entityId === undefined ? {} : { entityId }) }])
            yield* watchForEffect(confirmed)
            return
          }
          case "Refused": {
            command = yield* transition(command, { state: "answered", command: command.id, attempt, status: outcome.status, body: outcome.text })
            // A send after a lost answer refused as a duplicate: an earlier attempt took effect.
            if (doubtful && refusedAsDuplicate(outcome.error, kind)) {
              const refusal = `attempt ${attempt} refused as a duplicate: ${outcome.text.slice(0, 300)}`
              // The existing entity's id: from the copy (no page scan), else a targeted read.
              const copied = yield* inCopy(command, kind)
              const find = kind.identity._tag === "resend" ? kind.identity.find : undefined
              const where = Option.isSome(copied)
                ? { _tag: "Found" as const, id: copied.value.id, evidence: copied.value.evidence }
                : find === undefined ? undefined : yield* readBack(command, access.success, find)
              yield* transition(command, {
                state: "confirmed",
                command: command.id,
                by: "readBack",
                evidence: where === undefined ? refusal : `${refusal}; ${where.evidence}`,
                ...(where?._tag === "Found" && where.id !== undefined ? { entityId: where.id } : {})
              })
              return
            }
            yield* transition(command, { state: "failed", command: command.id, attempt, reason: reasonOf(outcome.error as { _tag: string; message: string }) })
            return
          }
          case "NotSent": {
            // Provably not applied: the command goes on after a pause (growing, bounded).
            notSent++
            command = yield* transition(command, { state: "inDoubt", command: command.id, attempt, reason: outcome.reason, evidence: "not applied: the call was refused before the service handled it" })
            if (notSent > maxAttempts) {
              yield* transition(command, { state: "failed", command: command.id, attempt, reason: outcome.reason })
              return
            }
            yield* Effect.sleep(Duration.millis(Math.min(30_000, 250 * 2 ** notSent)))
            break
          }
          case "Lost":
            command = yield* transition(command, { state: "inDoubt", command: command.id, attempt, reason: outcome.reason })
            doubtful = true
            break
        }
      }
    })

  const launch = (command: Command) =>
    Effect.suspend(() => {
      running.add(command.id)
      // No slot is held while a command waits: it waits in its write lane (one call in flight per
      // tenant and URL) and in the scheduler for its key's budget; the scheduler's maxInFlight
      // bounds the calls on the wire.
      return Effect.forkIn(drive(command).pipe(
        Effect.ensuring(Effect.suspend(() => {
          running.delete(command.id)
          return wake(command.id)
        })),
        Effect.catchCause((cause) => Effect.logError("CommandEngine: a command's run failed; it resumes at the next start", cause))
      ), scope)
    })

  // Untraced: it runs once per command on the write path's hot loop (a host traces its own request).
  const submit = Effect.fnUntraced(function*(request: SubmitRequest) {
    const valid = validate(request.kind, request.payload)
    if (valid._tag === "Failure") return yield* valid.failure
    const { kind, payload } = valid.success
    const print = fingerprint(kind, payload)
    const compare = (existing: Command): Effect.Effect<Submitted, IdempotencyKeyReused> =>
      existing.fingerprint === print
        ? Effect.succeed({ command: existing, created: false })
        : Effect.fail(new IdempotencyKeyReused({
          idempotencyKey: request.idempotencyKey,
          commandId: existing.id,
          message: `the idempotency key "${request.idempotencyKey}" names command ${existing.id}, with another payload`
        }))
    const known = byKey.get(keyOf(request.tenant, request.idempotencyKey))
    if (known !== undefined) return yield* compare(commands.get(known)!)
    yield* granted(request.tenant, kind, payload)
    yield* precondition(request.tenant, kind, payload)
    const id = Crypto.randomUUID()
    const marked = CommandKind.kinds[kind].marked
    const t: EngineRecordCommands.Transition = {
      state: "requested",
      command: id,
      kind,
      payload,
      requestedBy: request.requestedBy,
      idempotencyKey: request.idempotencyKey,
      fingerprint: print,
      ...(marked ? { marker: `ocs:${id.replaceAll("-", "").slice(0, 20)}` } : {})
    }
    const { results, at } = yield* appendAll(request.tenant, [t])
    const result = results[0]!
    if (shared !== undefined) {
      // The log decides: the first request it holds with this key is the command, whichever
      // server took it (ours or another's); the follower folds it and its owner sends it.
      const winner = yield* shared.decided(keyOf(request.tenant, request.idempotencyKey), byKey)
      const existing = commands.get(winner)!
      return winner === id ? { command: existing, created: true } satisfies Submitted : yield* compare(existing)
    }
    if (result._tag === "Duplicate") {
      // Another request with this key won the race (or came before the log's dedupe window): its record decides.
      // The winner may not be in memory yet (its append is still returning): its record is enough.
      const winner = yield* Ledger.at(result.offset).pipe(Effect.provide(context))
      const existing = Option.flatMap(winner, (w) =>
        Option.fromUndefinedOr(commands.get(w.command) ?? Ledger.step(undefined, request.tenant, w, at)))
      if (Option.isSome(existing)) return yield* compare(existing.value)
      // A duplicate whose record cannot be read: never a second command for one key.
      return yield* Effect.die(new Error(`idempotency key ${request.idempotencyKey}: the log holds a request at offset ${result.offset} that cannot be read`))
    }
    const command = Ledger.step(undefined, request.tenant, t, at)!
    commands.set(id, command)
    byKey.set(keyOf(request.tenant, request.idempotencyKey), id)
    yield* launch(command)
    return { command, created: true } satisfies Submitted
  })

  const find = (tenant: Ids.TenantRef, id: string) =>
    Effect.sync(() => {
      const c = commands.get(id)
      return c !== undefined && c.tenant.appId === tenant.appId && c.tenant.businessId === tenant.businessId ? Option.some(c) : Option.none<Command>()
    })

  const found = (tenant: Ids.TenantRef, id: string) =>
    Effect.flatMap(find(tenant, id), (c) => Option.isSome(c) ? Effect.succeed(c.value) : Effect.fail(new CommandNotFound({ commandId: id, message: `no command ${id} for this tenant` })))

  const inDoubt = (tenant: Ids.TenantRef, id: string) =>
    Effect.flatMap(found(tenant, id), (c) =>
      c.state === "inDoubt" ? Effect.succeed(c) : Effect.fail(new NotInDoubt({ commandId: id, state: c.state, message: `command ${id} is ${c.state}, not in doubt` })))

  // Resume: a pending command is sent; an attempt in flight at the crash is in doubt first; a
  // doubt being resolved when the process stopped is resolved again. Only one the engine left
  // to a person (its read-back could not answer) waits for their decision.
  // Shared: the owner of each tenant takes its open commands up (the follower's sweep).
  if (shared === undefined) for (const c of commands.values()) if (resumable(c)) yield* launch(c)
  // Effects still looked for when the process stopped (recent ones: an old log is not re-read).
  const now = yield* Clock.currentTimeMillis
  for (const c of shared === undefined ? commands.values() : []) {
    if (c.state === "confirmed" && c.confirmedBy === "answer" && c.seen === undefined && now - c.updatedAt < 2 * seenWithin) yield* watchForEffect(c)
  }

  const launchRetried = (c: Command) => launch({ ...c, state: "pending", attempts: Math.min(c.attempts, maxAttempts - 1) })
  if (shared !== undefined) {
    yield* shared.start({
      commands,
      byKey,
      keyOf,
      running,
      resumable,
      launch,
      launchRetried,
      settle: (c) => (EngineRecordCommands.isFinal(c.state) || waitsForAPerson(c) ? wake(c.id) : Effect.void)
    })
  }

  return CommandEngine.of({
    submit,
    get: find,
    list: (tenant, listOptions) =>
      Effect.sync(() =>
        [...commands.values()].filter((c) =>
          c.tenant.appId === tenant.appId && c.tenant.businessId === tenant.businessId &&
          (listOptions?.state === undefined || c.state === listOptions.state) && (listOptions?.kind === undefined || c.kind === listOptions.kind)
        ).sort((a, b) => (a.id < b.id ? 1 : -1))
      ),
    outcome: (tenant, id) =>
      Effect.gen(function*() {
        const c = yield* found(tenant, id)
        // Shared, on a server that does not send the tenant's commands: a doubt is still being resolved by the owner.
        const elsewhere = shared !== undefined && !shared.owns(tenant)
        if (EngineRecordCommands.isFinal(c.state) || (c.state === "inDoubt" && (elsewhere ? waitsForAPerson(c) : !running.has(id)))) return c
        const waiter = yield* Deferred.make<Command>()
        waiters.set(id, [...(waiters.get(id) ?? []), waiter])
        return yield* Deferred.await(waiter)
      }),
    retry: Effect.fn("CommandEngine.retry")(function*(tenant: Ids.TenantRef, id: string, by: string) {
      const c = yield* inDoubt(tenant, id)
      const next = yield* transition(c, { state: "retried", command: id, afterAttempt: c.attempts, by })
      // The person's retry sends at once: no read-back overrides their decision. Shared: the
      // tenant's owner sends it when it follows the record.
      if (shared === undefined || shared.owns(tenant)) yield* launchRetried(next)
      return next
    }),
    markDone: Effect.fn("CommandEngine.markDone")(function*(tenant: Ids.TenantRef, id: string, decision: { readonly by: string; readonly entityId?: string | undefined; readonly note?: string | undefined }) {
      const c = yield* inDoubt(tenant, id)
      return yield* transition(c, {
        state: "confirmed",
        command: id,
        by: "person",
        evidence: `marked done by ${decision.by}${decision.note === undefined ? "" : `: ${decision.note}`}`,
        ...(decision.entityId === undefined ? {} : { entityId: decision.entityId })
      })
    }),
    cancel: Effect.fn("CommandEngine.cancel")(function*(tenant: Ids.TenantRef, id: string, by: string) {
      const c = yield* found(tenant, id)
      if (shared !== undefined && !shared.owns(tenant)) {
        // Only the sender can cancel with no race against its first send.
        return yield* new NotCancellable({ commandId: id, state: c.state, message: `command ${id}: this server does not send the tenant's commands; cancel it on the server that owns the tenant` })
      }
      // Synchronous check and claim: the drive checks the state before its first send.
      if (c.state !== "pending" || c.attempts > 0 || claimed.has(id)) {
        return yield* new NotCancellable({ commandId: id, state: c.state, message: `command ${id} is ${c.state}${c.attempts > 0 || claimed.has(id) ? ", sent already" : ""}: only a command not sent yet can be cancelled` })
      }
      claimed.add(id)
      commands.set(id, { ...c, state: "cancelled" })
      return yield* transition(c, { state: "cancelled", command: id, by })
    }),
    counts: Effect.sync(() => {
      const out = emptyCounts()
      for (const c of commands.values()) out[c.state]++
      return out
    }),
    metrics: Effect.sync((): CommandMetrics => {
      const byKind = new Map<string, number>()
      let inDoubtCount = 0
      let person = 0
      let flagged = 0
      for (const c of commands.values()) {
        const k = `${c.kind}\u0000${c.state}`
        byKind.set(k, (byKind.get(k) ?? 0) + 1)
        if (c.state === "inDoubt") {
          inDoubtCount++
          if (waitsForAPerson(c)) person++
        }
        if (c.seen === "flagged") flagged++
      }
      let laneQueue = coalescer.queued()
      for (const lane of lanes.values()) laneQueue += lane.users - 1
      return {
        byKindAndState: [...byKind].map(([k, count]) => {
          const [kind, state] = k.split("\u0000") as [string, EngineRecordCommands.State]
          return { kind, state, count }
        }),
        inDoubt: inDoubtCount,
        waitingForAPerson: person,
        flagged,
        laneQueue,
        laneBusy: lanes.size
      }
    })
  })
})
