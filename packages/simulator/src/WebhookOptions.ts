/**
 * How the webhook sender behaves: timeouts, retries and the degradation ladder (docs/api-catalogue.md, Delivery
 * rules 4 and 8). `WebhookPatch` is the partial form the simulator's options, the control API
 * (`POST /_sim/webhook-options`) and the control client all accept.
 */

export type DegradationStep = "recheck" | "disable" | "lock"

export interface WebhookOptions {
  readonly timeoutMs: number
  readonly maxRetries: number
  /** Delay before retry n (the last value repeats). */
  readonly retryDelaysMs: ReadonlyArray<number>
  /** The API reference requires https; loopback tests use http, so this is off by default. */
  readonly requireHttps: boolean
  readonly degradation: {
    readonly window: number
    readonly minSamples: number
    readonly below: number
    readonly ladder: ReadonlyArray<DegradationStep>
  }
  /** How long a reordered event waits for a successor before it is sent anyway. */
  readonly reorderHoldMs: number
}

/** Any subset of the options, the degradation settings included. */
export type WebhookPatch =
  & Partial<Omit<WebhookOptions, "degradation">>
  & { readonly degradation?: Partial<WebhookOptions["degradation"]> | undefined }

export const defaultWebhookOptions: WebhookOptions = {
  timeoutMs: 5_000,
  maxRetries: 3,
  retryDelaysMs: [1_000, 5_000, 15_000],
  requireHttps: false,
  degradation: { window: 20, minSamples: 10, below: 0.5, ladder: ["recheck", "disable", "lock"] },
  reorderHoldMs: 2_000
}

/** `options` with `patch` laid over it (the degradation settings merged field by field). */
export const patchWebhookOptions = (options: WebhookOptions, patch: WebhookPatch | undefined): WebhookOptions => ({
  ...options,
  ...patch,
  degradation: { ...options.degradation, ...patch?.degradation }
})
