/**
 * The registry of projections: every entity module, in one list that the planner (plan.ts and
 * the rebuild's planner thread), the projector's statements, change detection, digests and the
 * read API iterate. Adding an entity: write its module (see ./products.ts), add it here, export
 * its table from src/Tables.ts, generate the migration (README: "Adding an entity").
 */
import { DomainEvent } from "@ocs/protocol"
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { bills } from "./bills.ts"
import { brands } from "./brands.ts"
import { categories } from "./categories.ts"
import { commands } from "./commands.ts"
import { customers } from "./customers.ts"
import { depots } from "./depots.ts"
import { documents } from "./documents.ts"
import { inventory } from "./inventory.ts"
import { orders } from "./orders.ts"
import { pageService } from "./pageService.ts"
import { payments } from "./payments.ts"
import { products } from "./products.ts"
import type { AnyProjection, Apply, CountSpec, EventOf, PassSpec, Statement, TableSpec, Tag } from "./Projection.ts"
import { unknownEvents } from "./unknownEvents.ts"
import { webhooks } from "./webhooks.ts"

export const all: ReadonlyArray<AnyProjection> = [products, inventory, orders, bills, customers, depots, categories, brands, payments, documents, pageService, webhooks, commands, unknownEvents]

const none = () => {}

/**
 * The rule of every domain event tag: a new tag fails to compile here until a projection handles
 * it or it is listed as writing no row.
 */
const rules = {
  ...products.apply, ...inventory.apply, ...orders.apply, ...bills.apply, ...customers.apply, ...depots.apply,
  ...categories.apply, ...brands.apply, ...payments.apply, ...documents.apply, ...webhooks.apply, ...commands.apply,
  ...unknownEvents.apply,
  // Tombstones for what a pass missed come as a `changes` record of their own (change
  // detection): the pass itself writes no row, so a rebuild gives the same tables.
  SyncPassCompleted: none,
  // No table changes: the business removed the app, which is a fact about the tenant (the sync
  // server puts it on hold), not about its commerce data. The rows stay as the last state
  // known, and the event itself stays in the log for audit.
  AppUninstalled: none
} satisfies { readonly [K in Tag]: Apply<K> }

// Two modules claiming one tag would leave one of them silently unused.
const claimed = all.flatMap((p) => Object.keys(p.apply))
if (new Set(claimed).size !== claimed.length) throw new Error(`projections: a domain event tag has two rules (${claimed.join(", ")})`)

/** Appends the rows of one decoded event to `plan`. */
export const applyEvent = (plan: Plan, record: ProjectableRecord, event: EventOf<Tag>, index: number): void =>
  (rules[event._tag] as Apply<Tag>)(plan, record, event, index)

/** Every statement of every projection; a plan's op `k` runs `statements[k]`. */
export const statements: ReadonlyArray<Statement> = all.flatMap((p) => p.statements)
statements.forEach((statement, i) => (statement.id = i))

/** The projected tables with their key and content columns (digests, comparisons): entities, then lines, then audit. */
export const projectedTables: ReadonlyArray<TableSpec> = all.flatMap((p) => p.tables).sort((a, b) => a.rank - b.rank)

/** What a completed full pass compares, per deletable kind (docs/architecture.md §4.14), with the entity's table. */
export const passes: ReadonlyArray<PassSpec & { readonly table: string }> =
  all.flatMap((p) => (p.pass === undefined ? [] : [{ ...p.pass, table: p.tables[0]!.name }]))

// A completed pass of a kind nobody compares would find no deletion, silently.
for (const kind of Object.keys(DomainEvent.deletionOf)) {
  if (!passes.some((pass) => pass.kind === kind)) throw new Error(`projections: no projection compares full passes of ${kind}`)
}

const observers = new Map<string, (event: EventOf<Tag>) => string | undefined>()
for (const pass of passes) {
  for (const [tag, of] of Object.entries(pass.observed)) observers.set(tag, of as (event: EventOf<Tag>) => string | undefined)
}

/** The id a pull's observation names, for the pass it belongs to (stock: the product's); undefined for other events. */
export const observedId = (event: EventOf<Tag>): string | undefined => observers.get(event._tag)?.(event)

/** The tables `counts` and `rowCounts` report (the entity's table, keyed by its name in `rowCounts`). */
export const counted: ReadonlyArray<CountSpec & { readonly table: string }> =
  all.flatMap((p) => (p.counts === undefined ? [] : [{ ...p.counts, table: p.tables[0]!.name }]))

/** Every projection's read queries over one connection (synchronous; ReadApi.ts runs them). */
export const queries = (orm: BetterSQLite3Database) => ({
  ...products.queries(orm), ...inventory.queries(orm), ...orders.queries(orm), ...bills.queries(orm), ...customers.queries(orm),
  ...depots.queries(orm), ...categories.queries(orm), ...brands.queries(orm), ...payments.queries(orm), ...documents.queries(orm),
  ...pageService.queries(orm), ...webhooks.queries(orm), ...commands.queries(orm), ...unknownEvents.queries(orm)
})
