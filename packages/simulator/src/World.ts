/**
 * The simulator's whole in-memory state, built from resolved options: the registry of apps,
 * businesses and tokens, the rate limiter, logs, faults and the webhook sender. `reset`
 * returns it to its state at start (same seed, same demo ids and token).
 */
import type { ApiEnv } from "./Api.ts"
import type { MessagesForm } from "./ApiCall.ts"
import { type Business, Registry, type Token } from "./Auth.ts"
import { Grants } from "./Grant.ts"
import { CallLog } from "./CallLog.ts"
import type { CatalogOptions } from "./Catalog.ts"
import { Faults } from "./Faults.ts"
import { hex, stream } from "./internal/Random.ts"
import { allPermissions } from "./Operations.ts"
import type { DemoInfo } from "./ControlWire.ts"
import { defaultRateLimitConfig, RateLimiter, type RateLimitPatch } from "./RateLimits.ts"
import { Webhooks } from "./Webhooks.ts"
import { defaultWebhookOptions, patchWebhookOptions, type WebhookOptions, type WebhookPatch } from "./WebhookOptions.ts"

export type { DemoInfo }

/** Data of a business; every field is optional (defaults below). */
export interface DataOptions {
  readonly seed?: number | undefined
  readonly products?: number | undefined
  readonly orders?: number | undefined
  readonly bills?: number | undefined
  readonly customers?: number | undefined
  readonly depots?: ReadonlyArray<number> | undefined
  readonly bigIds?: boolean | undefined
  readonly deletedRatio?: number | undefined
  /** Days back over which seeded orders and bills are spread (default 120). */
  readonly historyDays?: number | undefined
  /** Conversations of each page-service page (default 60). */
  readonly conversationsPerPage?: number | undefined
}

export interface SimulatorOptions extends DataOptions {
  /** Default 127.0.0.1 (loopback only). */
  readonly host?: string | undefined
  /** Default 8788; 0 picks a free port (reported in the handle). */
  readonly port?: number | undefined
  /** Path prefix of the POS service, default "/pos". */
  readonly posBasePath?: string | undefined
  /** Path prefix of the Vpage service, default "/vpage". */
  readonly vpageBasePath?: string | undefined
  /** Create the demo app, business and token at start (default true). */
  readonly demo?: boolean | undefined
  readonly rateLimit?: RateLimitPatch | undefined
  readonly webhooks?: WebhookPatch | undefined
  /** HTTP status per errorCode for API failures (default: 200 for all). */
  readonly errorHttpStatus?: { readonly [errorCode: string]: number } | undefined
  /**
   * Strict mode: refuse what the real service is recorded to accept (null and unknown filters,
   * ids as strings, rebuilt cursors), rotate cursor shapes, answer undocumented paths in JSON
   * (docs/api-catalogue.md, "Simulator leniency"). Default: the environment variable
   * OCS_SIMULATOR_STRICT=1 (the engine's test suites set it), else false.
   */
  readonly strict?: boolean | undefined
  /**
   * Refuse cursors that are JSON-equal to the one issued but not the same text, e.g. with
   * keys reordered (default false: the real service accepts them).
   */
  readonly strictCursors?: boolean | undefined
  /** The form of `messages` in failures (default: as each check words it). */
  readonly messagesForm?: MessagesForm | undefined
  /** product/add with an appProductId already used: "refuse" (default) or "accept" (a second product). */
  readonly appProductIdDuplicates?: "refuse" | "accept" | undefined
  readonly callLogLimit?: number | undefined
  readonly deliveryLogLimit?: number | undefined
  readonly maxBodyBytes?: number | undefined
  /** Lifetime of tokens created without an expiry (docs/api-catalogue.md, one year). */
  readonly tokenLifetimeMs?: number | undefined
  /** Seeded times lie before this instant (default: the current hour, when the simulator starts). */
  readonly epochMs?: number | undefined
  /** Lifetime of an access code of the grant flow (docs/api-catalogue.md §8: 10 minutes). */
  readonly accessCodeLifetimeMs?: number | undefined
  /** How long a token works after a newer one was issued for its app + business (§8: 15 minutes). */
  readonly tokenOverlapMs?: number | undefined
}

/** `options.strict`, else OCS_SIMULATOR_STRICT=1 (set by the engine's test suites). */
export const strictDefault = (options: SimulatorOptions): boolean =>
  options.strict ?? (globalThis.process?.env?.["OCS_SIMULATOR_STRICT"] === "1")

export const DEFAULT_PORT = 8788
export const YEAR_MS = 365 * 24 * 3600 * 1000

export const defaultData = {
  seed: 1,
  products: 1000,
  orders: 200,
  bills: 100,
  customers: 50,
  historyDays: 120,
  depots: [1, 2, 3] as ReadonlyArray<number>,
  bigIds: false,
  deletedRatio: 0.01
}

export class World {
  readonly options: SimulatorOptions
  readonly seed: number
  readonly now: () => number = () => Date.now()
  readonly registry: Registry
  readonly limiter: RateLimiter
  readonly calls: CallLog
  readonly faults: Faults
  readonly webhooks: Webhooks
  /** Access codes of the grant flow (./Grant.ts). */
  readonly grants = new Grants()
  readonly env: ApiEnv
  /** Seeded times lie before this instant; fixed at start so that reset gives the same data. */
  readonly epochMs: number
  demo: { appId: string; businessId: string; accessToken: string; verifyToken: string; secretKey: string } | undefined
  posBaseUrl = ""
  vpageBaseUrl = ""
  url = ""

  constructor(options: SimulatorOptions) {
    this.options = options
    this.seed = options.seed ?? defaultData.seed
    this.epochMs = options.epochMs ?? Math.floor(Date.now() / 3_600_000) * 3_600_000
    this.registry = new Registry(this.seed)
    this.limiter = new RateLimiter({ ...defaultRateLimitConfig, ...options.rateLimit })
    this.calls = new CallLog(options.callLogLimit ?? 200_000)
    this.faults = new Faults(this.seed)
    this.webhooks = this.makeWebhooks()
    this.env = {
      registry: this.registry,
      limiter: this.limiter,
      calls: this.calls,
      faults: this.faults,
      webhooks: this.webhooks,
      now: this.now,
      cursorSecret: `ocs-sim-${this.seed}`,
      settings: {
        strict: strictDefault(options),
        strictCursors: options.strictCursors ?? false,
        messagesForm: options.messagesForm ?? "default",
        appProductIdDuplicates: options.appProductIdDuplicates ?? "refuse"
      },
      errorHttpStatus: options.errorHttpStatus ?? {}
    }
    this.seedDemo()
  }

  private webhookOptions(): WebhookOptions {
    return patchWebhookOptions(defaultWebhookOptions, this.options.webhooks)
  }

  private makeWebhooks(): Webhooks {
    return new Webhooks(
      this.webhookOptions(),
      this.registry,
      this.faults,
      this.now,
      this.options.deliveryLogLimit ?? 50_000
    )
  }

  catalog(data: DataOptions): CatalogOptions {
    return {
      seed: data.seed ?? this.seed,
      products: data.products ?? defaultData.products,
      orders: data.orders ?? defaultData.orders,
      bills: data.bills ?? defaultData.bills,
      customers: data.customers ?? defaultData.customers,
      depots: data.depots ?? defaultData.depots,
      bigIds: data.bigIds ?? defaultData.bigIds,
      deletedRatio: data.deletedRatio ?? defaultData.deletedRatio,
      epochMs: this.epochMs,
      historyDays: data.historyDays ?? this.options.historyDays ?? defaultData.historyDays,
      ...(data.conversationsPerPage === undefined ? {} : { conversationsPerPage: data.conversationsPerPage })
    }
  }

  private seedDemo(): void {
    if (this.options.demo === false) {
      this.demo = undefined
      return
    }
    const random = stream(this.seed ^ 0xde70)
    const app = this.registry.createApp({ name: "Demo app", verifyToken: `demo-verify-${hex(random, 16)}` })
    const business = this.registry.createBusiness({ catalog: this.catalog(this.options) })
    const token = this.grant({ appId: app.appId, business, accessToken: `demo-${hex(random, 32)}` })
    this.demo = {
      appId: app.appId,
      businessId: business.businessId,
      accessToken: token.accessToken,
      verifyToken: app.verifyToken,
      secretKey: app.secretKey
    }
  }

  grant(input: {
    readonly appId: string
    readonly business: Business
    readonly accessToken?: string | undefined
    readonly version?: string | undefined
    readonly permissions?: ReadonlyArray<string> | undefined
    readonly depots?: ReadonlyArray<number> | undefined
    readonly expiresAtMs?: number | undefined
  }): Token {
    return this.registry.createToken({
      accessToken: input.accessToken,
      appId: input.appId,
      businessId: input.business.businessId,
      version: input.version ?? "3.0",
      permissions: input.permissions ?? allPermissions,
      depots: input.depots ?? input.business.depots,
      expiresAtMs: input.expiresAtMs ?? this.now() + (this.options.tokenLifetimeMs ?? YEAR_MS)
    })
  }

  demoInfo(): DemoInfo | undefined {
    return this.demo === undefined ? undefined : {
      ...this.demo,
      posBaseUrl: this.posBaseUrl,
      vpageBaseUrl: this.vpageBaseUrl
    }
  }

  /** Back to the state at start: same demo, no other tenants, logs, faults or locks. */
  reset(): void {
    this.webhooks.reset()
    this.webhooks.options = this.webhookOptions()
    this.registry.clear()
    this.grants.clear()
    this.limiter.configure({ ...defaultRateLimitConfig, ...this.options.rateLimit })
    this.calls.clear()
    this.faults.reset()
    this.env.settings.strict = strictDefault(this.options)
    this.env.settings.strictCursors = this.options.strictCursors ?? false
    this.env.settings.messagesForm = this.options.messagesForm ?? "default"
    this.env.settings.appProductIdDuplicates = this.options.appProductIdDuplicates ?? "refuse"
    this.seedDemo()
  }

  close(): void {
    this.webhooks.close()
  }
}
