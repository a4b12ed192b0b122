/**
 * The drizzle schema of the tenant store's file (`tenants.sqlite`). drizzle-kit reads this
 * module to generate `drizzle/`; the migrations run at open (./TenantDatabase.ts).
 *
 * The first migration creates these tables with IF NOT EXISTS, because files written before
 * the store had migrations already hold them (created by the same DDL, inline).
 */
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core"

/** An application: its sealed verify tokens (a JSON list) and whether webhooks are accepted. */
export const apps = sqliteTable("apps", {
  appId: text("app_id").primaryKey(),
  verifyTokens: text("verify_tokens").notNull(),
  enabled: integer("enabled").notNull().default(1),
  createdAt: integer("created_at").notNull(),
  /** The sealed secret key the grant flow's code exchange needs; null: the app cannot connect businesses. */
  secretKey: text("secret_key"),
  /** The public base URL of this server the grant's return link is built on. */
  publicUrl: text("public_url")
})

/** A business that granted an application access: the sealed access token and the grant. */
export const businesses = sqliteTable("businesses", {
  appId: text("app_id").notNull().references(() => apps.appId, { onDelete: "cascade" }),
  businessId: text("business_id").notNull(),
  accessToken: text("access_token").notNull(),
  version: text("version").notNull().default("3.0"),
  permissions: text("permissions").notNull().default("[]"),
  depots: text("depots").notNull().default("[]"),
  grantedAt: integer("granted_at"),
  expiresAt: integer("expires_at"),
  status: text("status").notNull().default("active"),
  attentionCode: text("attention_code"),
  attentionMessage: text("attention_message"),
  attentionAt: integer("attention_at"),
  lastWebhookAt: integer("last_webhook_at"),
  /** Per-tenant sync settings as JSON (./TenantSettings.ts); "{}" keeps the server's. */
  settings: text("settings").notNull().default("{}"),
  createdAt: integer("created_at").notNull(),
  /** Vpage pages granted (a JSON list). */
  pages: text("pages").notNull().default("[]")
}, (t) => [primaryKey({ columns: [t.appId, t.businessId] })])

/** The sync state of one resource of a tenant: cursor of a running full sync, window, pause. */
export const resourceState = sqliteTable("resource_state", {
  appId: text("app_id").notNull(),
  businessId: text("business_id").notNull(),
  resource: text("resource").notNull(),
  pausedCode: text("paused_code"),
  pausedMessage: text("paused_message"),
  pausedAt: integer("paused_at"),
  cursor: text("cursor"),
  fullStartedAt: integer("full_started_at"),
  fullCompletedAt: integer("full_completed_at"),
  /** For windowed operations: the end (ms) of the window a full read is in. */
  windowEnd: integer("window_end"),
  incrementalBound: integer("incremental_bound"),
  lastRunAt: integer("last_run_at"),
  pages: integer("pages").notNull().default(0),
  records: integer("records").notNull().default(0),
  lastError: text("last_error")
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.resource] })])

/** The last errors (the newest 1000 are kept), for the admin API. */
export const recentErrors = sqliteTable("recent_errors", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  at: integer("at").notNull(),
  appId: text("app_id").notNull(),
  businessId: text("business_id"),
  resource: text("resource"),
  tag: text("tag").notNull(),
  message: text("message").notNull()
})

/** Notices sent once per tenant and kind (a grant about to expire, a silence of webhooks). */
export const notices = sqliteTable("notices", {
  appId: text("app_id").notNull(),
  businessId: text("business_id").notNull(),
  kind: text("kind").notNull(),
  at: integer("at").notNull()
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.kind] })])
