/**
 * What an operator should see: recent errors (of passes, uninstalls, expiring grants, silent
 * webhooks) and notices given once (an expiry warning, a day of silence). The server
 * implements it in SQLite; the engine records the errors of its passes here.
 */
import { Context, type Effect, Schema } from "effect"

export interface RecentError {
  readonly at: number
  readonly appId: string
  readonly businessId: string | null
  readonly resource: string | null
  readonly tag: string
  readonly message: string
}

export class NoticesUnavailable extends Schema.TaggedError<NoticesUnavailable>()("NoticesUnavailable", {
  message: Schema.String
}) {}

export class Notices extends Context.Service<Notices, {
  readonly recordError: (error: Omit<RecentError, "at">) => Effect.Effect<void, NoticesUnavailable>
  /** Newest first. */
  readonly recentErrors: (limit?: number, appId?: string) => Effect.Effect<ReadonlyArray<RecentError>, NoticesUnavailable>
  /** Records a notice once; false if it was already recorded. */
  readonly noticeOnce: (appId: string, businessId: string, kind: string) => Effect.Effect<boolean, NoticesUnavailable>
  /** Forgets a tenant's notices whose kind starts with `prefix` (so they can be given again). */
  readonly clearNotices: (appId: string, businessId: string, prefix: string) => Effect.Effect<void, NoticesUnavailable>
}>()("@ocs/sync/Notices") {}
