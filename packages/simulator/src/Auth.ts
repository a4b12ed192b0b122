/**
 * Applications, businesses and access tokens (docs/api-catalogue.md, Authentication), and the checks every
 * API call goes through, in this order: appId, businessId, token (version, binding, expiry),
 * API enabled. Ids are kept as canonical decimal strings, since businessId may exceed 2^53.
 */
import { BusinessData, type CatalogOptions, TWO_POW_53 } from "./Catalog.ts"
import { hex, stream } from "./internal/Random.ts"

export interface App {
  readonly appId: string
  name: string
  removed: boolean
  /** Why the application is locked (docs/api-catalogue.md, States, "Application locked"); undefined when not. */
  lockedReason: string | undefined
  /** The verify token used when webhooks are enabled without naming one. */
  verifyToken: string
  /** What the application proves itself with when it exchanges an access code (./Grant.ts). */
  secretKey: string
}

export interface Business {
  readonly businessId: string
  apiEnabled: boolean
  readonly depots: ReadonlyArray<number>
  data: BusinessData
  readonly catalog: CatalogOptions
}

export interface Token {
  readonly accessToken: string
  readonly appId: string
  readonly businessId: string
  /** Protocol version under which the token was obtained, e.g. "3.0" or "2.0". */
  readonly version: string
  /** Resources (data pages) granted, e.g. "product"; "resource/operation" grants one operation. */
  readonly permissions: ReadonlyArray<string>
  readonly depots: ReadonlyArray<number>
  expiresAtMs: number
  revoked: boolean
}

export type AuthResult =
  | { readonly ok: true; readonly app: App; readonly business: Business; readonly token: Token }
  | { readonly ok: false; readonly errorCode: string; readonly message: string }

const ID = /^[1-9][0-9]{0,30}$/

/** Canonical decimal form of an id, or undefined when it is not a positive integer. */
export const canonicalId = (raw: unknown): string | undefined => {
  if (typeof raw === "bigint") return raw > 0n ? raw.toString() : undefined
  if (typeof raw === "number") return Number.isSafeInteger(raw) && raw > 0 ? String(raw) : undefined
  if (typeof raw === "string" && ID.test(raw)) return raw
  return undefined
}

const fail = (errorCode: string, message: string): AuthResult => ({ ok: false, errorCode, message })

export class Registry {
  readonly apps = new Map<string, App>()
  readonly businesses = new Map<string, Business>()
  readonly tokens = new Map<string, Token>()
  private nextApp = 100001n
  private nextBusiness = 200001n
  private random: () => number
  /** Secret keys come from their own stream, so tokens drawn from `random` stay as before. */
  private secretRandom: () => number
  private readonly seed: number

  constructor(seed: number) {
    this.seed = seed
    this.random = stream(seed ^ 0x5eed)
    this.secretRandom = stream(seed ^ 0x5ec7)
  }

  /** Forgets every app, business and token (reset). */
  clear(): void {
    this.apps.clear()
    this.businesses.clear()
    this.tokens.clear()
    this.nextApp = 100001n
    this.nextBusiness = 200001n
    this.random = stream(this.seed ^ 0x5eed)
    this.secretRandom = stream(this.seed ^ 0x5ec7)
  }

  createApp(input: {
    readonly appId?: string | undefined
    readonly name?: string | undefined
    readonly verifyToken?: string | undefined
    readonly secretKey?: string | undefined
  }): App {
    let appId = input.appId
    if (appId === undefined) {
      while (this.apps.has(this.nextApp.toString())) this.nextApp++
      appId = (this.nextApp++).toString()
    }
    const app: App = {
      appId,
      name: input.name ?? `App ${appId}`,
      removed: false,
      lockedReason: undefined,
      verifyToken: input.verifyToken ?? `vt_${hex(this.random, 24)}`,
      secretKey: input.secretKey ?? `sk_${hex(this.secretRandom, 32)}`
    }
    this.apps.set(appId, app)
    return app
  }

  createBusiness(input: {
    readonly businessId?: string | undefined
    readonly apiEnabled?: boolean | undefined
    readonly catalog: CatalogOptions
  }): Business {
    let businessId = input.businessId
    if (businessId === undefined) {
      const offset = input.catalog.bigIds ? TWO_POW_53 : 0n
      while (this.businesses.has((this.nextBusiness + offset).toString())) this.nextBusiness++
      businessId = (offset + this.nextBusiness++).toString()
    }
    const business: Business = {
      businessId,
      apiEnabled: input.apiEnabled ?? true,
      depots: input.catalog.depots,
      data: new BusinessData(input.catalog),
      catalog: input.catalog
    }
    this.businesses.set(businessId, business)
    return business
  }

  createToken(input: Omit<Token, "accessToken" | "revoked"> & { readonly accessToken?: string | undefined }): Token {
    const token: Token = { ...input, accessToken: input.accessToken ?? `tok_${hex(this.random, 32)}`, revoked: false }
    this.tokens.set(token.accessToken, token)
    return token
  }

  /** A token that still works for app + business (deliveries need one: docs/api-catalogue.md, Delivery rules 5). */
  hasValidGrant(appId: string, businessId: string, now: number): boolean {
    for (const token of this.tokens.values()) {
      if (token.appId === appId && token.businessId === businessId && !token.revoked && token.expiresAtMs > now) {
        return true
      }
    }
    return false
  }

  /** The business removes the application: every token of that pair stops working. */
  revokeGrant(appId: string, businessId: string): number {
    let n = 0
    for (const token of this.tokens.values()) {
      if (token.appId === appId && token.businessId === businessId && !token.revoked) {
        token.revoked = true
        n++
      }
    }
    return n
  }

  authenticate(
    rawAppId: string | null,
    rawBusinessId: string | null,
    authorization: string | undefined,
    version: string,
    now: number
  ): AuthResult {
    const appId = canonicalId(rawAppId)
    const app = appId === undefined ? undefined : this.apps.get(appId)
    if (app === undefined || app.removed) {
      return fail("ERR_INVALID_APP_ID", rawAppId === null ? "appId is missing from the query string" : "appId is invalid")
    }
    if (app.lockedReason !== undefined) return fail("ERR_INVALID_APP_ID", `application is locked: ${app.lockedReason}`)
    const businessId = canonicalId(rawBusinessId)
    const business = businessId === undefined ? undefined : this.businesses.get(businessId)
    if (business === undefined) {
      return fail(
        "ERR_INVALID_BUSINESS_ID",
        rawBusinessId === null ? "businessId is missing from the query string" : "businessId is invalid"
      )
    }
    const token = authorization === undefined ? undefined : this.tokens.get(authorization)
    if (token === undefined) {
      return fail("ERR_INVALID_ACCESS_TOKEN", authorization === undefined ? "Authorization header is missing" : "access token is invalid")
    }
    if (token.version !== version) {
      return fail("ERR_INVALID_VERSION", `access token was obtained under version ${token.version}, called ${version}`)
    }
    if (token.appId !== app.appId || token.businessId !== business.businessId) {
      return fail("ERR_INVALID_ACCESS_TOKEN", "access token was not issued for this appId and businessId")
    }
    if (token.revoked) return fail("ERR_INVALID_ACCESS_TOKEN", "access token was revoked")
    if (token.expiresAtMs <= now) return fail("ERR_INVALID_ACCESS_TOKEN", "access token has expired")
    if (!business.apiEnabled) return fail("ERR_BUSINESS_NOT_ENABLE_API", "the business has not enabled API use")
    return { ok: true, app, business, token }
  }
}

/** docs/api-catalogue.md, Authentication 5: a permission is a resource, or one "resource/operation". */
export const permits = (token: Token, permission: string, operationKey: string): boolean =>
  token.permissions.includes(permission) || token.permissions.includes(operationKey) || token.permissions.includes("*")
