/**
 * The control API under `/_sim/...` (JSON in and out, ids as JSON integers): tenants,
 * tokens, data changes (which emit webhooks), events, the call and delivery logs, faults,
 * rate-limit settings and reset. Inputs are decoded with the schemas of ControlWire.ts; a bad
 * input answers HTTP 400 with `{ "error": "..." }`, an unknown entity 404.
 *
 * The routes live by concept in ControlSettings, ControlTenants, ControlData, ControlEffects
 * and ControlLogs;
 * a new control operation is one more `route(...)` in the list it belongs to.
 */
import * as Data from "./ControlData.ts"
import * as Effects from "./ControlEffects.ts"
import * as Logs from "./ControlLogs.ts"
import { type Route, router } from "./ControlRouter.ts"
import * as Settings from "./ControlSettings.ts"
import * as Shapes from "./ControlShapes.ts"
import * as Tenants from "./ControlTenants.ts"

const routes: ReadonlyArray<Route> = [
  ...Settings.simulator,
  ...Tenants.apps,
  ...Tenants.businesses,
  ...Tenants.tokens,
  ...Data.products,
  ...Data.orders,
  ...Data.silentDeletes,
  ...Data.events,
  ...Shapes.shapes,
  ...Effects.effects,
  ...Logs.logs,
  ...Settings.faults,
  ...Settings.limits
]

/** Answers one control request. */
export const handle = router(routes)
