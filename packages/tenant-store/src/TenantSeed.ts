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
  /** Vpage pages granted. */
  pages: Schema.optional(Schema.Array(Schema.String)),
  grantedAt: Schema.optional(Schema.String),
  expiresAt: Schema.optional(Schema.String),
  /** This tenant's own sync settings (@ocs/sync TenantSettings); absent fields keep `sync`'s. */
  settings: Schema.optional(TenantSettings.TenantSettings)
})

/** An absolute http(s) URL without query or fragment: where this server is reached from the internet. */
export const PublicUrl = Schema.String.check(Schema.makeFilter((u) => {
  try {
    const url = new URL(u)
    return (url.protocol === "https:" || url.protocol === "http:") && url.search === "" && url.hash === ""
      || "must be an http(s) URL without query or fragment"
  } catch {
    return "must be an absolute URL"
  }
}))

export const AppConfig = Schema.Struct({
  appId: IdInput,
  verifyTokens: Schema.Array(Schema.String.check(Schema.isMinLength(1))),
  /**
   * The application's secret key, for the grant flow's code exchange (sealed at rest, never
   * logged or returned); without it the application cannot connect businesses itself.
   */
  secretKey: Schema.optional(Schema.String.check(Schema.isMinLength(1))),
  /** This server's public base URL; the grant's return link is `<publicUrl>/connect/<appId>/callback`. */
  publicUrl: Schema.optional(PublicUrl),
  businesses: Schema.optional(Schema.Array(BusinessConfig))
})

/** The `tenants` section. */
export const Section = Schema.Array(AppConfig)
