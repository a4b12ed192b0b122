/**
 * The admin HTTP API (effect/http router), `/healthz`, `/readyz` and `/metrics`.
 *
 * Everything under `/admin` needs the admin key (`x-admin-key: <key>` or
 * `Authorization: Bearer <key>`); without it: 401. Access tokens are accepted on input and
 * never returned or logged. Every parameter is bounded: a value the server cannot honour is
 * answered 400 with what was expected, never 500.
 *
 * A console session (`/ui`, see console/) stands for the key as admin/AdminHttp.ts allows.
 *
 * The routes live by subject in `admin/`; each group takes the services it needs from the
 * context, so this module only composes them.
 */
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import { AdminDocs, type AdminRoutes } from "@ocs/admin-api"
import * as CommandRoutes from "./admin/CommandRoutes.ts"
import { type AdminOptions, guard, json, keyFailureDefaults } from "./admin/AdminHttp.ts"
import * as HealthRoutes from "./admin/HealthRoutes.ts"
import * as HistoryRoutes from "./admin/HistoryRoutes.ts"
import * as OperationRoutes from "./admin/OperationRoutes.ts"
import * as OverviewRoutes from "./admin/OverviewRoutes.ts"
import * as QuarantineRoutes from "./admin/QuarantineRoutes.ts"
import * as ReadModelRoutes from "./admin/ReadModelRoutes.ts"
import * as RelayRoutes from "./admin/RelayRoutes.ts"
import * as SeriesRoutes from "./admin/SeriesRoutes.ts"
import * as TenantRoutes from "./admin/TenantRoutes.ts"
import * as ConnectRoutes from "./connect/ConnectRoutes.ts"
import * as ConsoleRoutes from "./console/ConsoleRoutes.ts"
import * as SourceThrottle from "./SourceThrottle.ts"

export type { AdminOptions } from "./admin/AdminHttp.ts"
export { describeBusiness, parseDate } from "./admin/AdminHttp.ts"

/** A router that writes down every route added to it in `table`. */
const recording = (router: HttpRouter.HttpRouter, table: Array<AdminRoutes.RouteKey>): HttpRouter.HttpRouter => ({
  ...router,
  add: (method, path, handler, options) => {
    table.push({ method, path })
    return router.add(method, path, handler, options)
  }
})

/**
 * The router, and `table`: every route added to it, which the admin reference
 * (@ocs/admin-api AdminRoutes) is checked against.
 */
export const routes = (given: AdminOptions) =>
  Effect.gen(function*() {
    const options: AdminOptions = { ...given, keyFailures: given.keyFailures ?? SourceThrottle.make(keyFailureDefaults) }
    const table: Array<AdminRoutes.RouteKey> = []
    const router = recording(yield* HttpRouter.make, table)
    yield* router.add("GET", "/admin/openapi.json", guard(options)(Effect.sync(() => json(AdminDocs.document()))))
    yield* HealthRoutes.add(router, options)
    yield* TenantRoutes.add(router, options)
    yield* OperationRoutes.add(router, options)
    yield* ReadModelRoutes.add(router, options)
    yield* QuarantineRoutes.add(router, options)
    yield* OverviewRoutes.add(router, options)
    yield* SeriesRoutes.add(router, options)
    yield* HistoryRoutes.add(router, options)
    yield* RelayRoutes.add(router, options)
    yield* CommandRoutes.add(router, options)
    if (options.connect !== undefined) yield* ConnectRoutes.add(router, options.connect)
    // The operator console (`/ui`), when the server keeps console sessions.
    if (options.sessions !== undefined) yield* ConsoleRoutes.add(router, { ...options, sessions: options.sessions })
    return Object.assign(router, { table: table as ReadonlyArray<AdminRoutes.RouteKey> })
  })
