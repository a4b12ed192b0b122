/**
 * The drizzle schema of a rate-limit store file. drizzle-kit reads this module to generate
 * `drizzle/`; the migrations run at open.
 *
 * The first migration creates these tables with IF NOT EXISTS, because files written before
 * the store had migrations already hold them (created by the same DDL, inline). Both tables are
 * WITHOUT ROWID (their primary key is the only lookup): drizzle cannot declare that, so the
 * generated SQL was edited by hand; a later migration that rebuilds one of them must keep it.
 */
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core"

/** One row per budget key: its limit, its window, and the lock the service put on it. */
export const rateKeys = sqliteTable("rate_keys", {
  key: text("key").primaryKey(),
  limitRequests: integer("limit_requests").notNull(),
  windowMs: integer("window_ms").notNull(),
  lockedUntil: integer("locked_until").notNull().default(0)
})

/** One row per granted call of a process run (`session`), completed or not. */
export const rateCalls = sqliteTable("rate_calls", {
  session: text("session").notNull(),
  id: integer("id").notNull(),
  key: text("key").notNull(),
  grantedAt: integer("granted_at").notNull(),
  completedAt: integer("completed_at")
}, (t) => [
  primaryKey({ columns: [t.session, t.id] }),
  index("rate_calls_by_key").on(t.key, t.completedAt)
])
