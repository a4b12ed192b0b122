/**
 * Tenants as a configuration file (the `tenants` section: created at start when absent) and
 * the admin API's bodies write them: applications with verify tokens, businesses with their
 * grant and their own sync settings (@ocs/sync TenantSettings).
 */
import { Schema } from "effect"
import { Ids } from "@ocs/protocol"
import { TenantSettings } from "@ocs/sync"

/** An appId or businessId: a positive integer, as a number, bigint or string of digits. */
export const IdInput = Schema.Union([Schema.String, Schema.Number, Schema.BigInt]).check(
  Schema.makeFilter((u) => Ids.normalize(typeof u === "string" ? u.trim() : u) !== undefined || "must be a positive integer")
)

export const BusinessConfig = Schema.Struct({
  businessId: IdInput,
  accessToken: Schema.String.check(Schema.isMinLength(1)),
  version: Schema.optional(Schema.String),
  permissions: Schema.optional(Schema.Array(Schema.String)),
  depots: Schema.optional(Schema.Array(Schema.String)),
  grantedAt: Schema.optional(Schema.String),
  expiresAt: Schema.optional(Schema.String),
  /** This tenant's own sync settings (@ocs/sync TenantSettings); absent fields keep `sync`'s. */
  settings: Schema.optional(TenantSettings.TenantSettings)
})

export const AppConfig = Schema.Struct({
  appId: IdInput,
  verifyTokens: Schema.Array(Schema.String.check(Schema.isMinLength(1))),
  businesses: Schema.optional(Schema.Array(BusinessConfig))
})

/** The `tenants` section. */
export const Section = Schema.Array(AppConfig)
