/**
 * `GET /admin/quarantine?appId=&limit=`: webhooks stored for businesses that are not registered
 * (see ../Quarantine.ts): counts per business and the latest records (`limit`, 1..1000,
 * default 100). They are projected when the business registers (`POST /admin/tenants`).
 */
import { Effect } from "effect"
import type { HttpRouter } from "effect/http"
import { ReadModels } from "@ocs/read-models"
import { type AdminOptions, canonical, guard, json, queryInt, queryText, searchParams } from "./AdminHttp.ts"

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const readModels = yield* ReadModels.ReadModels
    const admin = guard(options)
    yield* router.add(
      "GET",
      "/admin/quarantine",
      admin(Effect.gen(function*() {
        const params = yield* searchParams
        const appIdText = yield* queryText(params, "appId", 40)
        const appId = appIdText === undefined ? undefined : yield* canonical(appIdText, "appId")
        const limit = yield* queryInt(params, "limit", { min: 1, max: 1000 })
        return json(yield* readModels.quarantine({ appId, limit }))
      }))
    )
  })
