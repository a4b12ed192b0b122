/**
 * What the tenant store holds, as the rest of the server sees it (applications, businesses,
 * sync state, recent errors), and how a row of the file becomes one: sealed tokens are opened
 * into `Redacted` values, JSON lists parsed, nullable column groups folded into one field.
 */
import { Redacted, Result } from "effect"
import type { Sealer } from "../Secrets.ts"
import type { Notices, SyncState, TenantSettings } from "@ocs/sync"

export type BusinessStatus = "active" | "paused" | "attention"

export interface App {
  readonly appId: string
  readonly verifyTokens: ReadonlyArray<Redacted.Redacted<string>>
  readonly enabled: boolean
  /** The secret key of the grant flow's code exchange (sealed at rest); null when not set. */
  readonly secretKey: Redacted.Redacted<string> | null
  /** The public base URL the grant's return link is built on; null when not set. */
  readonly publicUrl: string | null
}

/** What an application needs to connect businesses itself (the grant flow). */
export interface AppConnect {
  readonly secretKey?: string | undefined
  readonly publicUrl?: string | undefined
}

export interface Business {
  readonly appId: string
  readonly businessId: string
  readonly accessToken: Redacted.Redacted<string>
  readonly version: string
  readonly permissions: ReadonlyArray<string>
  readonly depots: ReadonlyArray<string>
  /** Vpage pages granted. */
  readonly pages: ReadonlyArray<string>
  readonly grantedAt: number | null
  readonly expiresAt: number | null
  readonly status: BusinessStatus
  /** Why a person is needed (errorCode and message), when status is "attention". */
  readonly attention: { readonly code: string; readonly message: string; readonly at: number } | null
  readonly lastWebhookAt: number | null
  /** Per-tenant sync settings (@ocs/sync TenantSettings), validated when they were stored. */
  readonly settings: TenantSettings.TenantSettings
}

/** A resource's sync state and a recent error: the shapes of the engine's ports (@ocs/sync). */
export type ResourceState = SyncState.ResourceState
export type RecentError = Notices.RecentError

export interface BusinessInput {
  readonly appId: string
  readonly businessId: string
  readonly accessToken: string
  readonly version?: string | undefined
  readonly permissions?: ReadonlyArray<string> | undefined
  readonly depots?: ReadonlyArray<string> | undefined
  readonly pages?: ReadonlyArray<string> | undefined
  readonly grantedAt?: number | null | undefined
  readonly expiresAt?: number | null | undefined
}

/** A row of `apps` as `SELECT app_id, verify_tokens, enabled, secret_key, public_url` reads it. */
export interface AppRow {
  app_id: string
  verify_tokens: string
  enabled: number
  secret_key: string | null
  public_url: string | null
}

/** A row of `businesses` as `SELECT *` reads it (./tenantTables.ts). */
export interface BusinessRow {
  app_id: string
  business_id: string
  access_token: string
  version: string
  permissions: string
  depots: string
  pages: string
  granted_at: number | null
  expires_at: number | null
  status: BusinessStatus
  attention_code: string | null
  attention_message: string | null
  attention_at: number | null
  last_webhook_at: number | null
  settings: string
}

/** A row of `resource_state` as `SELECT *` reads it. */
export interface StateRow {
  app_id: string
  business_id: string
  resource: string
  paused_code: string | null
  paused_message: string | null
  paused_at: number | null
  cursor: string | null
  full_started_at: number | null
  full_completed_at: number | null
  window_end: number | null
  incremental_bound: number | null
  last_run_at: number | null
  pages: number
  records: number
  last_error: string | null
}

export interface RecentErrorRow {
  at: number
  app_id: string
  business_id: string | null
  resource: string | null
  tag: string
  message: string
}

/** Row readers bound to the sealer of the file; they throw when a sealed value does not open. */
export const rowReader = (sealer: Sealer) => {
  const openSecret = (sealed: string, what: string) => {
    const r = sealer.open(sealed)
    if (Result.isFailure(r)) throw new Error(`${what}: ${r.failure.message}`)
    return r.success
  }

  const app = (r: AppRow): App => {
    const tokens = JSON.parse(Redacted.value(openSecret(r.verify_tokens, `verify tokens of ${r.app_id}`))) as Array<string>
    return {
      appId: r.app_id,
      verifyTokens: tokens.map((t) => Redacted.make(t)),
      enabled: r.enabled === 1,
      secretKey: r.secret_key === null ? null : openSecret(r.secret_key, `secret key of ${r.app_id}`),
      publicUrl: r.public_url
    }
  }

  const business = (r: BusinessRow): Business => ({
    appId: r.app_id,
    businessId: r.business_id,
    accessToken: openSecret(r.access_token, `access token of ${r.app_id}:${r.business_id}`),
    version: r.version,
    permissions: JSON.parse(r.permissions) as Array<string>,
    depots: JSON.parse(r.depots) as Array<string>,
    pages: JSON.parse(r.pages) as Array<string>,
    grantedAt: r.granted_at,
    expiresAt: r.expires_at,
    status: r.status,
    attention: r.attention_code === null ? null : { code: r.attention_code, message: r.attention_message ?? "", at: r.attention_at ?? 0 },
    lastWebhookAt: r.last_webhook_at,
    settings: JSON.parse(r.settings) as TenantSettings.TenantSettings
  })

  return { app, business }
}

export const toState = (r: StateRow): ResourceState => ({
  appId: r.app_id,
  businessId: r.business_id,
  resource: r.resource,
  paused: r.paused_code === null ? null : { code: r.paused_code, message: r.paused_message ?? "", at: r.paused_at ?? 0 },
  cursor: r.cursor,
  fullStartedAt: r.full_started_at,
  fullCompletedAt: r.full_completed_at,
  windowEnd: r.window_end ?? null,
  incrementalBound: r.incremental_bound,
  lastRunAt: r.last_run_at,
  pages: r.pages,
  records: r.records,
  lastError: r.last_error
})

export const toRecentError = (r: RecentErrorRow): RecentError => ({
  at: r.at,
  appId: r.app_id,
  businessId: r.business_id,
  resource: r.resource,
  tag: r.tag,
  message: r.message
})
