/**
 * The tenants the engine pulls for, as it reads them: the read side of the tenant registry,
 * plus the one write the engine makes to it (a tenant put on hold when a person must act).
 * The server implements it over its registry (SQLite, or the registry shared in Kafka mode).
 */
import { Context, type Effect, type Option, type Redacted, Schema } from "effect"
import type { TenantSettings } from "./TenantSettings.ts"

export type TenantStatus = "active" | "paused" | "attention"

/** What the engine needs of a tenant (a registry's record may hold more). */
export interface SyncTenant {
  readonly appId: string
  readonly businessId: string
  readonly accessToken: Redacted.Redacted<string>
  readonly status: TenantStatus
  /** When a webhook of the tenant last arrived (ms), for gap fill. */
  readonly lastWebhookAt: number | null
  /** Per-tenant sync settings; absent fields keep the server's. */
  readonly settings: TenantSettings
  /** What the grant allows (./Scopes.ts); absent or empty: not known, everything is pulled. */
  readonly permissions?: ReadonlyArray<string> | undefined
  readonly depots?: ReadonlyArray<string> | undefined
  /** The page-service pages the grant names (`pageIds`); the only pages read (./PageService.ts). */
  readonly pages?: ReadonlyArray<string> | undefined
}

export class TenantsUnavailable extends Schema.TaggedError<TenantsUnavailable>()("TenantsUnavailable", {
  message: Schema.String
}) {}

export class SyncTenants extends Context.Service<SyncTenants, {
  readonly tenant: (appId: string, businessId: string) => Effect.Effect<Option.Option<SyncTenant>, TenantsUnavailable>
  readonly tenants: (filter?: { readonly appId?: string | undefined; readonly status?: TenantStatus | undefined }) => Effect.Effect<ReadonlyArray<SyncTenant>, TenantsUnavailable>
  /** Puts the tenant on hold ("attention") with the errorCode and message a person acts on. */
  readonly hold: (appId: string, businessId: string, attention: { readonly code: string; readonly message: string }) => Effect.Effect<void, TenantsUnavailable>
}>()("@ocs/sync/SyncTenants") {}
