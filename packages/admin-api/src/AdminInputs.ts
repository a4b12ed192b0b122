/**
 * The bodies the admin API decodes, shared by the routes that decode them and by the
 * reference that documents them. Tenants are the tenant store's seed shapes
 * (@ocs/tenant-store TenantSeed), so a body and the configuration file take the same fields.
 */
import { Schema } from "effect"
import { TenantSeed } from "@ocs/tenant-store"

/** `POST /admin/apps` */
export const AppInput = Schema.Struct({
  appId: TenantSeed.AppConfig.fields.appId,
  verifyTokens: TenantSeed.AppConfig.fields.verifyTokens.check(Schema.isMinLength(1)),
  enabled: Schema.optional(Schema.Boolean),
  secretKey: TenantSeed.AppConfig.fields.secretKey,
  publicUrl: TenantSeed.AppConfig.fields.publicUrl
})

/** `POST /admin/tenants` */
export const TenantInput = Schema.Struct({ appId: TenantSeed.AppConfig.fields.appId, ...TenantSeed.BusinessConfig.fields })

/** `POST /ui/session`: the console's sign-in. */
export const SignIn = Schema.Struct({ key: Schema.String.check(Schema.isMaxLength(1000)) })
