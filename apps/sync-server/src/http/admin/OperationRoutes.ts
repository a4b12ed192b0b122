/** What the engine is doing: rate-limit keys and locks, recent errors, sync state, ownership, plugins. */
import { Effect } from "effect"
import type { HttpRouter } from "effect/http"
import { PluginRuntime } from "@ocs/plugin-sdk"
import { RateLimiter } from "@ocs/transport"
import { Ownership } from "../../cluster/Ownership.ts"
import { TenantStore } from "../../tenants/TenantStore.ts"
import { type AdminOptions, canonical, guard, json, problem, queryInt, queryText, searchParams } from "./AdminHttp.ts"

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const store = yield* TenantStore
    const limiter = yield* RateLimiter.RateLimiter
    const ownership = yield* Ownership
    const plugins = yield* PluginRuntime.PluginRuntime
    const admin = guard(options)

    yield* router.add(
      "GET",
      "/admin/locks",
      admin(Effect.map(limiter.metrics, (keys) => json({ locks: keys.filter((k) => k.lockedUntil !== undefined), keys: keys.length })))
    )
    yield* router.add("GET", "/admin/budgets", admin(Effect.map(limiter.metrics, (keys) => json({ keys }))))
    yield* router.add(
      "GET",
      "/admin/errors",
      admin(Effect.gen(function*() {
        const params = yield* searchParams
        const limit = yield* queryInt(params, "limit", { min: 1, max: 1000 })
        const appIdText = yield* queryText(params, "appId", 40)
        const appId = appIdText === undefined ? undefined : yield* canonical(appIdText, "appId")
        return json({ errors: yield* store.recentErrors(limit ?? 100, appId) })
      }))
    )
    yield* router.add("GET", "/admin/sync", admin(Effect.map(store.states(), (states) => json({ sync: states }))))
    yield* router.add("GET", "/admin/ownership", admin(Effect.sync(() => json(ownership.describe()))))

    yield* router.add("GET", "/admin/plugins", admin(Effect.map(plugins.metrics, (list) => json({ plugins: list }))))
    yield* router.add(
      "GET",
      "/admin/plugins/dead-letters",
      admin(Effect.gen(function*() {
        const plugin = yield* queryText(yield* searchParams, "plugin")
        return json({ deadLetters: yield* plugins.deadLetters(plugin) })
      }))
    )
    yield* router.add(
      "POST",
      "/admin/plugins/redrive",
      admin(Effect.gen(function*() {
        const params = yield* searchParams
        const id = yield* queryInt(params, "id", { min: 1, max: Number.MAX_SAFE_INTEGER })
        const plugin = yield* queryText(params, "plugin")
        return yield* plugins.redrive(id !== undefined ? { id } : { plugin }).pipe(
          Effect.map((result) => json(result)),
          // A name no plugin here has (`nosuch`, `__proto__`) is the caller's mistake: 404, not 500.
          Effect.catchTag("UnknownPlugin", (e) => Effect.succeed(problem(404, e.message.slice(0, 300))))
        )
      }))
    )
  })
