/**
 * Coalescing (docs/architecture.md §4.31): product/add and customer/add take up to 100 items a
 * call, and each write URL has its own budget of 150 calls per 30 s. Queued commands of one
 * tenant and kind go out as one call; the answer is split back per command by the item's key
 * (appProductId, mobile).
 *
 * Each command has recorded its own `sent` before it joins a call, so a crash leaves every item
 * of the call in doubt, resolved by reading back like any lost answer. A call refused for some
 * items (ERR_INVALID_FORM_FIELDS naming `products.3.name`) applied none of them: the items named
 * are refused, the others go out again at once without them.
 */
import { ApiError, type CommandKind, Ids, Json } from "@ocs/protocol"
import type { CommerceClient as Client } from "@ocs/transport"
import { Deferred, Duration, Effect, Exit, type Scope } from "effect"
import type { Command } from "../Command.ts"
import type { Outcome } from "./outcome.ts"

export interface Item {
  readonly command: Command
  readonly done: Deferred.Deferred<Outcome>
}

/** The per-item outcomes of one call, and the items to send again without the refused ones. */
export interface Split {
  readonly settled: ReadonlyArray<readonly [Item, Outcome]>
  readonly again: ReadonlyArray<Item>
}

// `products.3.name` (the simulator), `3.name` (a bare array): the item's index in the call.
const ITEM_PATH = /^(?:[A-Za-z_]+\.)?(\d+)(?:\.|$)/

/** Splits one call's outcome back to its items. Pure. */
export const split = (kind: CommandKind.CommandKind<unknown>, batch: CommandKind.Batch<unknown>, items: ReadonlyArray<Item>, outcome: Outcome): Split => {
  const n = items.length
  if (outcome._tag === "Answered") {
    const entries = Array.isArray(outcome.data) ? outcome.data : [outcome.data]
    const byKey = new Map<string, unknown>()
    for (const e of entries) {
      const k = batch.answerKey(e)
      if (k !== undefined && !byKey.has(k)) byKey.set(k, e)
    }
    return {
      settled: items.map((item, position) => {
        const key = batch.key(item.command.payload)
        const entry = byKey.get(key)
        if (entry === undefined) {
          // Answered, but not for this item: it may or may not exist; reading back decides.
          return [item, {
            _tag: "Lost",
            reason: { tag: "NotInAnswer", message: `the answer of a ${n}-item ${kind.kind} call names no entry for ${key}` }
          }] as const
        }
        return [item, { _tag: "Answered", data: [entry], text: Json.stringifyParsed(entry), status: outcome.status, call: { items: n, position } }] as const
      }),
      again: []
    }
  }
  if (outcome._tag === "Refused" && outcome.error._tag === "InvalidFormFields") {
    const error = outcome.error
    const mine = new Map<number, Record<string, string>>()
    let whole = false
    for (const [path, message] of Object.entries(error.fields)) {
      const m = ITEM_PATH.exec(path)
      const index = m === null ? -1 : Number(m[1])
      if (index < 0 || index >= n) whole = true
      else mine.set(index, { ...mine.get(index), [path]: message })
    }
    if (!whole && mine.size > 0) {
      const settled: Array<readonly [Item, Outcome]> = []
      const again: Array<Item> = []
      items.forEach((item, position) => {
        const fields = mine.get(position)
        if (fields === undefined) return again.push(item)
        const detail = Object.entries(fields).map(([p, m]) => `${p}: ${m}`).join("; ")
        settled.push([item, {
          _tag: "Refused",
          error: new ApiError.InvalidFormFields({
            errorCode: error.errorCode,
            message: `item ${position} of a ${n}-item ${kind.kind} call refused: ${detail}`,
            messages: fields,
            fields
          }),
          status: outcome.status,
          text: outcome.text
        }])
      })
      return { settled, again }
    }
  }
  // Lost, not sent, or refused as a whole: the same for every item.
  return { settled: items.map((item) => [item, outcome] as const), again: [] }
}

export interface Options {
  /** How long the first queued item waits for others before a call that is not full goes out. */
  readonly lingerMs: number
  /** One call with a body of several items (through the write lane). */
  readonly send: (tenant: Ids.TenantRef, access: Client.TenantAccess, kind: CommandKind.CommandKind<unknown>, body: unknown) => Effect.Effect<Outcome>
  /** Observes each call's size (metrics, benches). */
  readonly onCall?: ((kind: string, items: number) => void) | undefined
}

interface Queue {
  readonly items: Array<Item>
  running: boolean
}

export const make = (options: Options, scope: Scope.Scope) => {
  const queues = new Map<string, Queue>()
  const linger = Duration.millis(options.lingerMs)

  /** Up to `max` items, at most one per key (two with one appProductId in one call refuse each other). */
  const take = (queue: Queue, batch: CommandKind.Batch<unknown>): Array<Item> => {
    const out: Array<Item> = []
    const keys = new Set<string>()
    for (let i = 0; i < queue.items.length && out.length < batch.max;) {
      const item = queue.items[i]!
      const key = batch.key(item.command.payload)
      if (keys.has(key)) {
        i++
        continue
      }
      keys.add(key)
      out.push(item)
      queue.items.splice(i, 1)
    }
    return out
  }

  const sendAll = (access: Client.TenantAccess, kind: CommandKind.CommandKind<unknown>, batch: CommandKind.Batch<unknown>, items: ReadonlyArray<Item>) =>
    Effect.gen(function*() {
      let rest = items
      while (rest.length > 0) {
        options.onCall?.(kind.kind, rest.length)
        const exit = yield* Effect.exit(options.send(rest[0]!.command.tenant, access, kind, batch.body(rest.map((i) => i.command.payload))))
        const outcome: Outcome = Exit.isSuccess(exit)
          ? exit.value
          : { _tag: "Lost", reason: { tag: "Defect", message: "the call ended without an outcome" } }
        const { again, settled } = split(kind, batch, rest, outcome)
        for (const [item, o] of settled) yield* Deferred.succeed(item.done, o)
        rest = again
      }
    })

  const run = (key: string, queue: Queue, access: Client.TenantAccess, kind: CommandKind.CommandKind<unknown>, batch: CommandKind.Batch<unknown>) =>
    Effect.gen(function*() {
      while (true) {
        if (queue.items.length < batch.max) yield* Effect.sleep(linger)
        const items = take(queue, batch)
        if (items.length === 0) {
          queue.running = false
          queues.delete(key)
          return
        }
        yield* sendAll(access, kind, batch, items)
      }
    }).pipe(Effect.onInterrupt(() => Effect.sync(() => queues.delete(key))))

  /** One attempt of a command of a batch kind: it joins the tenant's next call of that kind. */
  const attempt = (command: Command, access: Client.TenantAccess, kind: CommandKind.CommandKind<unknown>, batch: CommandKind.Batch<unknown>) =>
    Effect.gen(function*() {
      const done = yield* Deferred.make<Outcome>()
      const key = `${Ids.tenantKey(command.tenant)}\u0000${kind.kind}`
      let queue = queues.get(key)
      if (queue === undefined) {
        queue = { items: [], running: false }
        queues.set(key, queue)
      }
      queue.items.push({ command, done })
      if (!queue.running) {
        queue.running = true
        yield* Effect.forkIn(run(key, queue, access, kind, batch), scope)
      }
      return yield* Deferred.await(done)
    })

  /** Items waiting for a call, all tenants (metrics). */
  const queued = (): number => {
    let n = 0
    for (const q of queues.values()) n += q.items.length
    return n
  }

  return { attempt, queued }
}
