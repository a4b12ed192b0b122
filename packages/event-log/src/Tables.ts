/**
 * The drizzle schema of an event-log file (and of the Kafka outbox, which is the same kind of
 * file). drizzle-kit reads this module to generate `drizzle/`; the migrations run at open.
 *
 * `consumerCheckpoints` is exported for read models: put it in your own drizzle schema (re-export
 * it from your schema file) so a projection saves its rows and its checkpoint in one transaction.
 *
 * `records` is written here as drizzle columns rather than derived from the record's field
 * list (internal/recordFields.ts): drizzle-kit reads this module as it is to generate the
 * migrations, and a column needs what the list does not say (SQL name, storage type,
 * NOT NULL, AUTOINCREMENT, indexes). The two are tied the other way round: the stored row's
 * fields must each name a column here (checked by the compiler), and page queries take their
 * SQL column names from this table (internal/recordRow.ts).
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core"

/** One row per fact, exactly as received. `offset` is never reused (AUTOINCREMENT). */
export const records = sqliteTable("records", {
  offset: integer("offset").primaryKey({ autoIncrement: true }),
  id: text("id").notNull(),
  tenant: text("tenant").notNull(),
  appId: text("app_id").notNull(),
  businessId: text("business_id"),
  source: text("source").notNull(),
  type: text("type").notNull(),
  receivedAt: integer("received_at").notNull(),
  body: text("body").notNull(),
  dedupeKey: text("dedupe_key"),
  meta: text("meta").notNull(),
  entityId: text("entity_id")
}, (t) => [
  uniqueIndex("records_id").on(t.id),
  // Every read (subscriptions, replay, audit) pages through one tenant's records in offset order.
  index("records_tenant_offset").on(t.tenant, t.offset),
  // Time ranges (the writer's dedupe window, audit statistics), tenant checked in the index.
  // Time first on purpose: appends stamp received_at as they come, so new entries land at the
  // index's end, whatever their tenant. An index that starts with the tenant takes one insert
  // per tenant of a commit in a different leaf page, and every such page is written to the WAL
  // again at each commit: with 100 tenants that cost 2.6 times the writer's CPU per record.
  index("records_received_tenant").on(t.receivedAt, t.tenant)
  // No index on dedupe_key: the writer keeps its dedupe index in memory (internal/dedupeIndex.ts).
  // No index on type or entity_id: reads filter them while paging a tenant in offset order.
])

/** Audit trail of appends refused as duplicates: what came, when, and which fact it repeats. */
export const dedupeDecisions = sqliteTable("dedupe_decisions", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  decidedAt: integer("decided_at").notNull(),
  tenant: text("tenant").notNull(),
  /** "dedupeKey": same key within the window; "id": a record with this id already exists. */
  reason: text("reason").notNull(),
  dedupeKey: text("dedupe_key"),
  originalOffset: integer("original_offset").notNull(),
  id: text("id").notNull(),
  type: text("type").notNull(),
  source: text("source").notNull(),
  receivedAt: integer("received_at").notNull()
}, (t) => [index("dedupe_decisions_tenant_key").on(t.tenant, t.dedupeKey)])

/** One row per group-commit transaction: how appends were batched (audit, tests, metrics). */
export const commits = sqliteTable("commits", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  committedAt: integer("committed_at").notNull(),
  requests: integer("requests").notNull(),
  appended: integer("appended").notNull(),
  duplicates: integer("duplicates").notNull()
})

/** Checkpoints of consumers that let the log keep them (`EventLog.commit`), or read models' own. */
export const consumerCheckpoints = sqliteTable("consumer_checkpoints", {
  consumer: text("consumer").primaryKey(),
  checkpoint: text("checkpoint").notNull(),
  updatedAt: integer("updated_at").notNull()
})

/** Kafka mode: how far the outbox relay got (last outbox offset the broker acknowledged). */
export const relayState = sqliteTable("relay_state", {
  name: text("name").primaryKey(),
  relayedOffset: integer("relayed_offset").notNull(),
  updatedAt: integer("updated_at").notNull()
})

/**
 * Kafka mode: outbox records the relay refused to send because they are larger than the broker
 * accepts (`max.message.bytes`). The record itself stays in `records` (nothing is lost); this row
 * says why it is not on the topic, until an operator raises the limit and redrives it.
 */
export const relayDeadLetters = sqliteTable("relay_dead_letters", {
  /** The record's outbox offset. */
  offset: integer("offset").primaryKey(),
  topic: text("topic").notNull(),
  tenant: text("tenant").notNull(),
  recordId: text("record_id").notNull(),
  type: text("type").notNull(),
  /** The record's size on the wire (key, value, headers, record overhead). */
  bytes: integer("bytes").notNull(),
  /** The limit it broke (bytes), as the relay knew it then. */
  limitBytes: integer("limit_bytes").notNull(),
  reason: text("reason").notNull(),
  refusedAt: integer("refused_at").notNull(),
  /** When a redrive put it on the topic; null while it waits. */
  redrivenAt: integer("redriven_at")
}, (t) => [index("relay_dead_letters_waiting").on(t.topic, t.redrivenAt)])
