/**
 * The grant flow (docs/api-catalogue.md §8): a user of a business opens the grant page
 * `GET /oauth?version=3.0&appId=&returnLink=`, picks the business, permissions and depots, and
 * posts the form; the simulator answers 302 to `returnLink` with an `accessCode` (10 minutes,
 * single use). The application exchanges it with `POST /v3.0/app/getaccesstoken?appId=`
 * (`{accessCode, secretKey}`, no Authorization header) for a token of one year. Only one token
 * per app + business is live: issuing one leaves the older ones 15 more minutes.
 *
 * The page is plain HTML with every checkbox checked, so a form posted as served grants
 * everything. Error codes of the exchange the reference does not spell are marked inferred.
 */
import * as Crypto from "node:crypto"
import type * as Http from "node:http"
import * as Json from "@ocs/protocol/Json"
import { type Call, failure, finish, isObj } from "./ApiCall.ts"
import { canonicalId } from "./Auth.ts"
import { isLoopbackHost, send } from "./internal/Http.ts"
import { allPermissions } from "./Operations.ts"
import type { World } from "./World.ts"

/** docs/api-catalogue.md §8: an access code lives 10 minutes; an old token 15 minutes after a new one. */
export const ACCESS_CODE_MS = 10 * 60_000
export const OVERLAP_MS = 15 * 60_000
/** Codes waiting to be exchanged; the oldest go first past this (the page needs no sign-in here). */
const MAX_CODES = 10_000

/** inferred: the reference names no code for these; both are failures of the exchange's inputs. */
export const ERR_INVALID_SECRET_KEY = "ERR_INVALID_SECRET_KEY"
export const ERR_INVALID_ACCESS_CODE = "ERR_INVALID_ACCESS_CODE"

interface AccessCode {
  readonly appId: string
  readonly businessId: string
  readonly permissions: ReadonlyArray<string>
  readonly depots: ReadonlyArray<number>
  readonly expiresAtMs: number
}

export class Grants {
  private readonly codes = new Map<string, AccessCode>()
  /** Codes issued and exchanged so far (the control API and tests read them). */
  issued = 0
  exchanged = 0

  issue(code: AccessCode): string {
    const accessCode = Crypto.randomBytes(24).toString("base64url")
    if (this.codes.size >= MAX_CODES) this.codes.delete(this.codes.keys().next().value!)
    this.codes.set(accessCode, code)
    this.issued++
    return accessCode
  }

  /** The code, removed (single use); "expired" when it outlived its 10 minutes. */
  take(accessCode: string, appId: string, now: number): AccessCode | "expired" | undefined {
    const code = this.codes.get(accessCode)
    if (code === undefined || code.appId !== appId) return undefined
    this.codes.delete(accessCode)
    return code.expiresAtMs <= now ? "expired" : code
  }

  clear(): void {
    this.codes.clear()
    this.issued = 0
    this.exchanged = 0
  }
}

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

const page = (res: Http.ServerResponse, status: number, title: string, body: string) =>
  send(
    res,
    status,
    `<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><h1>${
      escape(title)
    }</h1>${body}</body></html>`,
    "text/html; charset=utf-8"
  )

const refuse = (res: Http.ServerResponse, why: string) => page(res, 400, "Cannot grant access", `<p>${escape(why)}</p>`)

/** A return link the simulator may send a browser to: https, or http on loopback (tests). */
const returnLinkProblem = (link: string | null): string | undefined => {
  if (link === null || link === "") return "returnLink is missing"
  let url: URL
  try {
    url = new URL(link)
  } catch {
    return "returnLink is not a valid URL"
  }
  if (url.protocol === "https:") return undefined
  return url.protocol === "http:" && isLoopbackHost(url.hostname) ? undefined : "returnLink must be https"
}

/** `GET /oauth` serves the form; `POST /oauth` grants and redirects. */
export const handlePage = (world: World, req: Http.IncomingMessage, res: Http.ServerResponse, query: string, body: Buffer | undefined): void => {
  const params = req.method === "POST"
    ? new URLSearchParams(body === undefined ? "" : body.toString("utf8"))
    : new URLSearchParams(query)
  if (req.method === "POST" && body === undefined) return refuse(res, "the form is too large")
  const version = params.get("version")
  if (version !== "3.0") return refuse(res, `version ${version ?? "(missing)"} is not served; use version=3.0`)
  const appId = canonicalId(params.get("appId"))
  const app = appId === undefined ? undefined : world.registry.apps.get(appId)
  if (app === undefined || app.removed) return refuse(res, "appId names no application")
  const returnLink = params.get("returnLink")
  const problem = returnLinkProblem(returnLink)
  if (problem !== undefined) return refuse(res, problem)

  if (req.method !== "POST") {
    const businessId = canonicalId(params.get("businessId")) ?? world.demo?.businessId ?? world.registry.businesses.keys().next().value
    const business = businessId === undefined ? undefined : world.registry.businesses.get(businessId)
    const box = (name: string, value: string | number) =>
      `<label><input type="checkbox" name="${name}" value="${escape(String(value))}" checked> ${escape(String(value))}</label><br>`
    return page(
      res,
      200,
      `${app.name} asks for access`,
      `<form method="post" action="/oauth">` +
        `<input type="hidden" name="version" value="3.0">` +
        `<input type="hidden" name="appId" value="${escape(app.appId)}">` +
        `<input type="hidden" name="returnLink" value="${escape(returnLink!)}">` +
        `<p><label>Business <input type="text" name="businessId" value="${escape(businessId ?? "")}"></label></p>` +
        `<fieldset><legend>Permissions</legend>${allPermissions.map((p) => box("permissions", p)).join("")}</fieldset>` +
        `<fieldset><legend>Depots</legend>${(business?.depots ?? []).map((d) => box("depotIds", d)).join("")}</fieldset>` +
        `<p><button type="submit">Grant access</button></p></form>`
    )
  }

  const businessId = canonicalId(params.get("businessId"))
  const business = businessId === undefined ? undefined : world.registry.businesses.get(businessId)
  if (business === undefined) return refuse(res, "businessId names no business")
  const permissions = [...new Set(params.getAll("permissions"))]
  const unknown = permissions.filter((p) => !allPermissions.includes(p))
  if (unknown.length > 0) return refuse(res, `unknown permissions: ${unknown.join(", ")}`)
  const depots = [...new Set(params.getAll("depotIds").map(Number))]
  const foreign = depots.filter((d) => !business.depots.includes(d))
  if (foreign.length > 0) return refuse(res, `depots ${foreign.join(", ")} are not depots of business ${business.businessId}`)
  const accessCode = world.grants.issue({
    appId: app.appId,
    businessId: business.businessId,
    permissions,
    depots: business.depots.filter((d) => depots.includes(d)),
    expiresAtMs: world.now() + (world.options.accessCodeLifetimeMs ?? ACCESS_CODE_MS)
  })
  const location = `${returnLink}${returnLink!.includes("?") ? "&" : "?"}accessCode=${encodeURIComponent(accessCode)}`
  if (res.headersSent || res.destroyed) return
  res.writeHead(302, { location, "content-length": 0 })
  res.end()
}

/** `POST {pos}/v3.0/app/getaccesstoken?appId=`: `{accessCode, secretKey}`, no Authorization header. */
export const handleExchange = (
  world: World,
  req: Http.IncomingMessage,
  res: Http.ServerResponse,
  version: string,
  path: string,
  query: string,
  body: Buffer | undefined
): void => {
  const started = world.now()
  const rawAppId = new URLSearchParams(query).get("appId")
  const appId = canonicalId(rawAppId)
  const call: Call = {
    env: world.env,
    res,
    started,
    appId: appId ?? rawAppId,
    businessId: null,
    family: "pos",
    operation: "app/getaccesstoken",
    path,
    locked: false,
    rateKey: undefined
  }
  if (version !== "3.0") {
    return finish(call, 404, "ERR_NOT_FOUND", `{"code":0,"errorCode":"ERR_NOT_FOUND","messages":"version ${version} is not served"}`)
  }
  if (req.method !== "POST") {
    return finish(call, 405, "ERR_METHOD_NOT_ALLOWED", `{"code":0,"errorCode":"ERR_METHOD_NOT_ALLOWED","messages":"use POST"}`)
  }
  const app = appId === undefined ? undefined : world.registry.apps.get(appId)
  if (app === undefined || app.removed) return failure(call, "ERR_INVALID_APP_ID", "appId is invalid")
  if (body === undefined) return failure(call, "ERR_INVALID_DATA", "request body is too large")
  const parsed = Json.parseBytes(body)
  if (parsed._tag === "Failure") return failure(call, "ERR_INVALID_DATA", parsed.failure.message)
  const input = parsed.success.value
  if (!isObj(input)) return failure(call, "ERR_INVALID_FORM_FIELDS", { body: "must be a JSON object" })
  const { accessCode, secretKey } = input
  const messages: Record<string, string> = {}
  if (typeof accessCode !== "string" || accessCode === "") messages["accessCode"] = "accessCode is required"
  if (typeof secretKey !== "string" || secretKey === "") messages["secretKey"] = "secretKey is required"
  if (Object.keys(messages).length > 0) return failure(call, "ERR_INVALID_FORM_FIELDS", messages)
  // A wrong secret key does not spend the code: whoever holds only the code cannot burn it.
  if (secretKey !== app.secretKey) return failure(call, ERR_INVALID_SECRET_KEY, "secretKey is invalid")
  const code = world.grants.take(accessCode as string, app.appId, started)
  if (code === undefined) return failure(call, ERR_INVALID_ACCESS_CODE, "accessCode is invalid or was already used")
  if (code === "expired") return failure(call, ERR_INVALID_ACCESS_CODE, "accessCode has expired")
  const business = world.registry.businesses.get(code.businessId)
  if (business === undefined) return failure(call, "ERR_INVALID_BUSINESS_ID", "the business no longer exists")
  // spec §8: one live token per app + business; the older ones work 15 more minutes.
  const overlapEnd = started + (world.options.tokenOverlapMs ?? OVERLAP_MS)
  for (const t of world.registry.tokens.values()) {
    if (t.appId === app.appId && t.businessId === business.businessId && !t.revoked && t.expiresAtMs > overlapEnd) {
      t.expiresAtMs = overlapEnd
    }
  }
  const token = world.grant({ appId: app.appId, business, permissions: code.permissions, depots: code.depots })
  world.grants.exchanged++
  return finish(
    { ...call, businessId: business.businessId },
    200,
    "ok",
    Json.stringify({
      code: 1,
      data: {
        accessToken: token.accessToken,
        version: token.version,
        expiredAt: Math.floor(token.expiresAtMs / 1000),
        businessId: BigInt(business.businessId),
        depotIds: token.depots,
        pageIds: [],
        permissions: token.permissions
      }
    })
  )
}
