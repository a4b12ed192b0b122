/**
 * Notices (`@ocs/sync` Notices) in the tenant store's file: the recent errors (the newest
 * 1,000 kept) and the notices given once per tenant (`notices`, by kind).
 */
import { Effect, Layer } from "effect"
import { Notices } from "@ocs/sync"
import { TenantDatabase, type TenantStoreError } from "./TenantDatabase.ts"
import { type RecentErrorRow, toRecentError } from "./internal/tenantRows.ts"

const RECENT_ERRORS_KEPT = 1000

const unavailable = (e: TenantStoreError) => new Notices.NoticesUnavailable({ message: e.message })

export const layer: Layer.Layer<Notices.Notices, TenantStoreError, TenantDatabase> = Layer.effect(
  Notices.Notices,
  Effect.flatMap(TenantDatabase, (file) =>
    file.run("prepare", () => {
      const db = file.client
      const s = {
        recordError: db.prepare<[number, string, string | null, string | null, string, string]>(
          "INSERT INTO recent_errors (at, app_id, business_id, resource, tag, message) VALUES (?, ?, ?, ?, ?, ?)"
        ),
        trimErrors: db.prepare<[number]>("DELETE FROM recent_errors WHERE id <= (SELECT max(id) FROM recent_errors) - ?"),
        recentErrors: db.prepare<[{ appId: string | null; limit: number }], RecentErrorRow>(
          "SELECT at, app_id, business_id, resource, tag, message FROM recent_errors WHERE (@appId IS NULL OR app_id = @appId) ORDER BY id DESC LIMIT @limit"
        ),
        noticeOnce: db.prepare<[string, string, string, number]>("INSERT OR IGNORE INTO notices (app_id, business_id, kind, at) VALUES (?, ?, ?, ?)"),
        clearNotices: db.prepare<[string, string, string]>("DELETE FROM notices WHERE app_id = ? AND business_id = ? AND kind LIKE ?")
      }
      return Notices.Notices.of({
        recordError: (error) =>
          Effect.mapError(
            file.runAt("record error", (now) => {
              s.recordError.run(now, error.appId, error.businessId, error.resource, error.tag, error.message)
              s.trimErrors.run(RECENT_ERRORS_KEPT)
            }),
            unavailable
          ),
        recentErrors: (limit = 100, appId) =>
          Effect.mapError(file.run("recent errors", () => s.recentErrors.all({ appId: appId ?? null, limit }).map(toRecentError)), unavailable),
        noticeOnce: (appId, businessId, kind) => Effect.mapError(file.runAt("notice", (now) => s.noticeOnce.run(appId, businessId, kind, now).changes > 0), unavailable),
        clearNotices: (appId, businessId, prefix) => Effect.mapError(file.run("clear notices", () => void s.clearNotices.run(appId, businessId, `${prefix}%`)), unavailable)
      })
    }))
)
