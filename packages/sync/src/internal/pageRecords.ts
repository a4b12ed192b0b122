/**
 * The records a pass writes to the log besides what the API answered: a page as received (its
 * dedupe key and meta), the small record of a page the log already held, and the record that
 * ends a full pass. Their shapes are declared once in @ocs/protocol's EngineRecord, which the
 * read models read them with (docs/architecture.md §4.14, §4.17).
 */
import { Option, type Tracer } from "effect"
import * as Crypto from "node:crypto"
import { EngineRecord, Ids, Operation, Records } from "@ocs/protocol"
import { type LogRecord, TraceContext } from "@ocs/event-log"
import type { CommerceClient } from "@ocs/transport"
import type { PassMeta } from "../Planner.ts"

type NewRecord = LogRecord.NewRecord

const sha = (text: string) => Crypto.createHash("sha256").update(text).digest("hex")
const cursorText = (c: Option.Option<{ readonly text: string }>) => Option.match(c, { onNone: () => null, onSome: (v) => v.text })

type Tenant = Ids.TenantRef

/**
 * One page as received. `range`: the window filters of a windowed full read. Two windows'
 * first pages share a cursor (none) and may share a text (an empty page), yet are different
 * facts: the range is part of their dedupe key and kept in meta.
 */
export const page = (t: Tenant, op: Operation.Operation<unknown>, p: CommerceClient.RawPage, options: {
  readonly mode: string
  readonly range: Readonly<Record<string, unknown>> | undefined
  readonly pass: PassMeta | undefined
  readonly span: Tracer.Span
}): NewRecord => ({
  appId: t.appId,
  businessId: t.businessId,
  source: "sync",
  type: Operation.key(op),
  body: p.text,
  // The same page (same cursor in, same content) is the same fact.
  dedupeKey: `sync:${Ids.tenantKey(t)}:${Operation.resourceKey(op)}:${options.range === undefined ? "" : `${sha(JSON.stringify(options.range))}:`}${sha(cursorText(p.cursor) ?? "")}:${sha(p.text)}`,
  // The page's meta (docs/architecture.md §4.14): the entity, and the full pass it belongs to
  // (its ids count towards tombstones) and whether it is the resource's first (it reveals no
  // change). The append's span is carried in the record (§4.17): the projection links to it.
  meta: EngineRecord.pageMeta({
    entity: op.entity ?? { kind: op.resource, idField: "id" },
    mode: options.mode,
    ...(options.range === undefined ? {} : { range: options.range }),
    ...(options.pass?.id === undefined ? {} : { pass: options.pass.id }),
    ...(options.pass?.baseline === true ? { baseline: true as const } : {}),
    cursor: cursorText(p.cursor),
    next: cursorText(p.next),
    records: p.records.length,
    warnings: p.warnings.map((w) => w.text)
  }, options.span.sampled ? { [TraceContext.metaKey]: TraceContext.traceparent(options.span) } : {})
})

/** The ids of a page's records (orders fall back to `id`). */
const idsOf = (op: Operation.Operation<unknown>, p: CommerceClient.RawPage): Array<string> => {
  const field = op.entity?.idField ?? "id"
  const out: Array<string> = []
  for (const r of p.records) {
    const id = Records.recordId(r, field) ?? (op.entity?.kind === "order" ? Records.recordId(r, "id") : undefined)
    if (id !== undefined) out.push(id)
  }
  return out
}

/** The log already held this page (same cursor, same content): the pass still saw its records. */
export const passSeen = (t: Tenant, op: Operation.Operation<unknown>, p: CommerceClient.RawPage, passId: string, duplicateOf: string): NewRecord => ({
  appId: t.appId,
  businessId: t.businessId,
  source: "sync",
  type: EngineRecord.PASS_SEEN_TYPE,
  body: EngineRecord.encodePassSeen({ pass: passId, ids: idsOf(op, p) }),
  dedupeKey: EngineRecord.passSeenDedupeKey(passId, duplicateOf)
})

/** A full pass that read everything has ended (what it did not see is gone). */
export const passDone = (t: Tenant, pass: { readonly id: string; readonly kind: string; readonly startedAt: number; readonly createdFrom: number | undefined }, meta: {
  readonly resource: string
  readonly pages: number
  readonly records: number
}): NewRecord => ({
  appId: t.appId,
  businessId: t.businessId,
  source: "sync",
  type: EngineRecord.PASS_TYPE,
  body: EngineRecord.encodePass({ pass: { id: pass.id, kind: pass.kind, startedAt: pass.startedAt, ...(pass.createdFrom === undefined ? {} : { createdFrom: pass.createdFrom }) } }),
  dedupeKey: EngineRecord.passDedupeKey(t.appId, t.businessId, pass.id),
  meta
})
