/**
 * Per-tenant sync settings (docs/architecture.md §4.15): which resources a tenant syncs, how
 * often, which depots its stock reads cover, and after how long a silence of its webhooks an
 * incremental pull fills the gap. Each field overrides the server's `sync` section for that
 * tenant only; absent fields keep the server's value. Set in the config
 * (`tenants[].businesses[].settings`) or with `PUT /admin/tenants/:appId/:businessId/settings`,
 * and validated here: an error names the path of the field at fault.
 */
import { Effect, Schema } from "effect"

const Seconds = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 30 * 24 * 3600 }))

export const TenantSettings = Schema.Struct({
  /** Resources to sync, named as in `sync.resources` (e.g. "product/list", "order"). */
  resources: Schema.optionalKey(Schema.Array(Schema.String.check(Schema.isMinLength(1))).check(Schema.isMinLength(1))),
  /** Between incremental passes (seconds). */
  intervalSeconds: Schema.optionalKey(Seconds),
  /** Between full reconciliation passes (seconds). */
  reconcileSeconds: Schema.optionalKey(Seconds),
  /** A tenant whose webhooks were silent this long gets an incremental pull (seconds). */
  gapFillSilenceSeconds: Schema.optionalKey(Seconds),
  /** Depots the stock read (product/inventory) asks for; absent: every depot granted. */
  depots: Schema.optionalKey(Schema.Array(Schema.Int.check(Schema.isGreaterThan(0))).check(Schema.isMinLength(1))),
  /**
   * Page-service pages to read (docs/api-catalogue.md §9) when the grant names none; with a
   * grant's `pageIds`, those of them within it. Absent: the grant's pages (none: no page reads).
   */
  pages: Schema.optionalKey(Schema.Array(Schema.String.check(Schema.isPattern(/^\d{1,20}$/))).check(Schema.isMinLength(1)))
})
export type TenantSettings = typeof TenantSettings.Type

export class InvalidTenantSettings extends Schema.TaggedError<InvalidTenantSettings>()("InvalidTenantSettings", {
  message: Schema.String
}) {}

const decode = Schema.decodeUnknownEffect(TenantSettings)

/** Decodes settings from JSON input; the error's message names each path at fault. */
export const validate = (input: unknown): Effect.Effect<TenantSettings, InvalidTenantSettings> =>
  decode(input, { errors: "all", onExcessProperty: "error" }).pipe(
    Effect.mapError((e) => new InvalidTenantSettings({ message: `invalid tenant settings: ${e.message}` }))
  )

export const empty: TenantSettings = {}
