/**
 * The service itself: POST {base}/v3.0/<resource>/<operation>?appId=&businessId=.
 *
 * Order of checks: route, method, faults, appId, businessId, token (version, binding,
 * expiry), API enabled, rate limit, permission, body JSON, fields. Failures are answered
 * with HTTP 200 by default (docs/api-catalogue.md, "HTTP status codes returned with failures: not shown"),
 * overridable per errorCode (option `errorHttpStatus`) and per fault (`httpStatus`).
 */
import type * as Http from "node:http"
import * as Json from "@ocs/protocol/Json"
import { type ApiEnv, type Call, failure, finish } from "./ApiCall.ts"
import { applyFaults } from "./ApiFaults.ts"
import { list } from "./ApiList.ts"
import { readObject } from "./ApiObject.ts"
import { write } from "./ApiWrite.ts"
import { canonicalId, permits } from "./Auth.ts"
import { notFound } from "./internal/Http.ts"
import { find, type Family, operationKey } from "./Operations.ts"

export type { ApiEnv }
export { operationKey }

/** docs/api-catalogue.md §11: the ERR_429 text, word for word. */
export const RATE_LIMIT_MESSAGE = "Your app exceeded the API Rate Limit"

/** Handles one API call; `body` is the raw request body (undefined when over the size limit). */
export const handle = async (
  env: ApiEnv,
  req: Http.IncomingMessage,
  res: Http.ServerResponse,
  family: Family,
  version: string,
  resourceAndOperation: string,
  path: string,
  query: string,
  body: Buffer | undefined
): Promise<void> => {
  const started = env.now()
  const params = new URLSearchParams(query)
  const rawAppId = params.get("appId")
  const rawBusinessId = params.get("businessId")
  const appId = canonicalId(rawAppId) ?? rawAppId
  const businessId = canonicalId(rawBusinessId) ?? rawBusinessId
  const rateKey = appId !== null && businessId !== null ? `${appId}|${businessId}|${path}` : undefined
  const locked = rateKey !== undefined && env.limiter.config.enabled && env.limiter.isLocked(rateKey, started)
  const op = find(family, resourceAndOperation)
  const call: Call = {
    env,
    res,
    started,
    appId,
    businessId,
    family,
    operation: op === undefined ? path : resourceAndOperation,
    path,
    locked,
    rateKey
  }
  if (op === undefined || version !== "3.0") {
    const reason = version !== "3.0" ? `version ${version} is not served` : `no operation ${resourceAndOperation}`
    const answer = notFound(env.settings.strict, reason)
    return finish(call, 404, "ERR_NOT_FOUND", answer.body, answer.contentType)
  }
  if (req.method !== "POST") {
    return finish(call, 405, "ERR_METHOD_NOT_ALLOWED", `{"code":0,"errorCode":"ERR_METHOD_NOT_ALLOWED","messages":"use POST"}`)
  }
  if (!env.faults.empty && (await applyFaults(call, req))) return

  const auth = env.registry.authenticate(rawAppId, rawBusinessId, req.headers.authorization, version, started)
  if (!auth.ok) return failure(call, auth.errorCode, auth.message)

  if (rateKey !== undefined) {
    // A forced 429 (fault `forced429`) locks the key as a call over budget would.
    const verdict = !env.faults.empty && env.faults.first("forced429", call) !== undefined
      ? env.limiter.lockNow(rateKey, started)
      : env.limiter.check(rateKey, call.operation, op.rateLimit, started)
    if (!verdict.allowed) {
      const skew = env.faults.first("skewUnlockedAt", call)?.seconds ?? 0
      const lockedSeconds = Math.max(0, verdict.lockedSeconds - skew)
      const unlockedAt = verdict.unlockedAt - skew
      // docs/api-catalogue.md §11: the documented text, singular `message`, data.lockedSeconds, data.unlockedAt
      return failure(
        call,
        "ERR_429",
        undefined,
        `,"message":"${RATE_LIMIT_MESSAGE}","data":{"lockedSeconds":${lockedSeconds},"unlockedAt":${unlockedAt}}`
      )
    }
  }
  if (op.permission !== undefined && !permits(auth.token, op.permission, call.operation)) {
    return failure(call, "ERR_403", `the access token has no permission for ${op.permission}`)
  }
  if (body === undefined) return failure(call, "ERR_INVALID_DATA", "request body is too large")
  const parsed = Json.parseBytes(body)
  if (parsed._tag === "Failure") return failure(call, "ERR_INVALID_DATA", parsed.failure.message)
  const { text, value } = parsed.success
  if (op.kind === "list") return list(call, op, auth.business, auth.token, text, value)
  if (op.kind === "object") return readObject(call, op, auth.business, auth.token, value)
  return write({ call, op, business: auth.business, token: auth.token, body: value })
}
