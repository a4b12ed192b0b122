/**
 * `commands`: who changed what on the service, from the log (docs/architecture.md §4.31). The
 * write path's transition records (`EngineRecordCommands`, type `ocs:command`) are folded into
 * one line per command: when it was asked, by whom, which kind, its idempotency key, the
 * service's id of what it created or changed, how it ended and how many sends it took. Per
 * tenant, or per entity (the service's id, or the command's).
 */
import type { LogRecord } from "@ocs/event-log"
import { EngineRecordCommands } from "@ocs/protocol"
import * as Json from "@ocs/protocol/Json"
import { Effect, Option, Stream } from "effect"
import { LogSource } from "./LogSource.ts"
import * as Output from "./Output.ts"

export interface CommandLine {
  readonly id: string
  readonly tenant: string
  readonly requestedAt: string
  readonly requestedBy: string
  readonly kind: string
  readonly idempotencyKey: string
  readonly entityId: string | undefined
  readonly state: EngineRecordCommands.State
  readonly attempts: number
  readonly confirmedBy: string | undefined
  readonly seen: string | undefined
  readonly reason: string | undefined
  readonly updatedAt: string
}

export interface CommandsOptions {
  readonly tenant?: LogRecord.TenantKey | undefined
  readonly entity?: string | undefined
  readonly kind?: string | undefined
  readonly fromMs?: number | undefined
  readonly toMs?: number | undefined
  readonly format: "table" | "json" | "ndjson"
}

const who = (r: EngineRecordCommands.Requester): string => (r.name === undefined ? r.type : `${r.type}:${r.name}`)

/** Folds the transitions of the selected records into one line per command, in request order. */
export const fold = (records: Stream.Stream<LogRecord.LogRecord, unknown>) =>
  Effect.gen(function*() {
    const lines = new Map<string, { -readonly [K in keyof CommandLine]: CommandLine[K] }>()
    yield* records.pipe(Stream.runForEach((r) =>
      Effect.sync(() => {
        const t = Option.getOrUndefined(EngineRecordCommands.decodeText(r.body))
        if (t === undefined || r.businessId === null) return
        if (t.state === "requested") {
          if (lines.has(t.command)) return
          lines.set(t.command, {
            id: t.command,
            tenant: `${r.appId}:${r.businessId}`,
            requestedAt: Output.iso(r.receivedAt),
            requestedBy: who(t.requestedBy),
            kind: t.kind,
            idempotencyKey: t.idempotencyKey,
            entityId: undefined,
            state: "pending",
            attempts: 0,
            confirmedBy: undefined,
            seen: undefined,
            reason: undefined,
            updatedAt: Output.iso(r.receivedAt)
          })
          return
        }
        const line = lines.get(t.command)
        if (line === undefined) return
        line.state = EngineRecordCommands.stateAfter(t)
        if ("attempt" in t && t.attempt !== undefined) line.attempts = Math.max(line.attempts, t.attempt)
        if ("entityId" in t && t.entityId !== undefined) line.entityId = t.entityId
        if ("reason" in t) line.reason = `${t.reason.tag}${t.reason.code === undefined ? "" : ` ${t.reason.code}`}`
        if (t.state === "confirmed") line.confirmedBy = t.by
        if (t.state === "retried" || t.state === "cancelled") line.requestedBy = `${line.requestedBy} (${t.state} by ${t.by})`
        if (t.state === "seen") line.seen = t.by
        if (t.state === "notSeen") line.seen = "flagged"
        line.updatedAt = Output.iso(r.receivedAt)
      })
    ))
    return [...lines.values()] as ReadonlyArray<CommandLine>
  })

export const run = Effect.fn("Commands.run")(function*(options: CommandsOptions, out: string | undefined) {
  const source = yield* LogSource
  const all = yield* fold(source.records({ tenant: options.tenant, types: [EngineRecordCommands.COMMAND_TYPE], fromMs: options.fromMs, toMs: options.toMs }))
  const selected = all.filter((c) =>
    (options.entity === undefined || c.entityId === options.entity || c.id === options.entity) && (options.kind === undefined || c.kind === options.kind)
  )
  return yield* Effect.scoped(Effect.gen(function*() {
    const writer = yield* Output.open(out)
    if (options.format === "ndjson") yield* writer.write(selected.map((c) => `${Json.stringify(c)}\n`).join(""))
    else if (options.format === "json") yield* writer.write(`${Json.stringify(selected)}\n`)
    else {
      yield* writer.write(Output.table(
        ["requested", "tenant", "by", "kind", "key", "entity", "state", "sends", "confirmed", "seen", "reason"],
        selected.map((c) => [c.requestedAt, c.tenant, c.requestedBy, c.kind, c.idempotencyKey, c.entityId ?? "-", c.state, c.attempts, c.confirmedBy ?? "-", c.seen ?? "-", c.reason ?? "-"])
      ))
      yield* writer.write(`(${selected.length} command${selected.length === 1 ? "" : "s"})\n`)
    }
    return selected.length
  }))
})
