/**
 * The drizzle schema of the plugins' own file (`plugins.sqlite`). drizzle-kit reads this module
 * to generate `drizzle/`; the migrations run at open.
 *
 * The first migration creates these tables with IF NOT EXISTS, because files written before
 * the store had migrations already hold them (created by the same DDL, inline).
 */
import { index, integer, primaryKey, sqliteTable, text, unique } from "drizzle-orm/sqlite-core"

/** Where each plugin is in the event log. */
export const pluginCheckpoints = sqliteTable("plugin_checkpoints", {
  plugin: text("plugin").primaryKey().notNull(),
  checkpoint: text("checkpoint").notNull(),
  lastOffset: integer("last_offset"),
  updatedAt: integer("updated_at").notNull()
})

/** The key-value store of a plugin, per tenant (`business_id` is "" for application-level). */
export const pluginKv = sqliteTable("plugin_kv", {
  plugin: text("plugin").notNull(),
  appId: text("app_id").notNull(),
  businessId: text("business_id").notNull(),
  key: text("key").notNull(),
  value: text("value").notNull(),
  updatedAt: integer("updated_at").notNull()
}, (t) => [primaryKey({ columns: [t.plugin, t.appId, t.businessId, t.key] })])

/** Events a plugin failed to handle after its retries, kept to re-drive. One row per (plugin, event). */
export const pluginDeadLetters = sqliteTable("plugin_dead_letters", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  plugin: text("plugin").notNull(),
  eventId: text("event_id").notNull(),
  eventTag: text("event_tag").notNull(),
  appId: text("app_id").notNull(),
  businessId: text("business_id"),
  recordOffset: integer("record_offset").notNull(),
  record: text("record").notNull(),
  error: text("error").notNull(),
  attempts: integer("attempts").notNull(),
  firstFailedAt: integer("first_failed_at").notNull(),
  lastFailedAt: integer("last_failed_at").notNull()
}, (t) => [unique().on(t.plugin, t.eventId)])

/**
 * Kafka mode: per plugin, the dedupe keys delivered, with the position of the record that
 * carried each (docs/architecture.md §4.19). A webhook redelivered to another server reaches
 * the topic twice under one key; the copy at another position is not delivered. Entries older
 * than the dedupe window are pruned.
 */
export const pluginAppliedDedupeKeys = sqliteTable("plugin_applied_dedupe_keys", {
  plugin: text("plugin").notNull(),
  appId: text("app_id").notNull(),
  businessId: text("business_id").notNull(),
  dedupeKey: text("dedupe_key").notNull(),
  offset: integer("offset").notNull(),
  receivedAt: integer("received_at").notNull()
}, (t) => [primaryKey({ columns: [t.plugin, t.appId, t.businessId, t.dedupeKey] }), index("plugin_applied_dedupe_keys_received").on(t.receivedAt)])
