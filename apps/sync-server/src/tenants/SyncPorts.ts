/**
 * The sync engine's ports (`@ocs/sync`) over the tenant store: its tenants (read side and
 * hold), their sync state, and the notices its passes record.
 */
import { Context, Effect, Layer } from "effect"
import { Notices, SyncState, SyncTenants } from "@ocs/sync"
import { TenantStore } from "./TenantStore.ts"

export const layer: Layer.Layer<SyncTenants.SyncTenants | SyncState.SyncStateStore | Notices.Notices, never, TenantStore> = Layer.effectContext(
  Effect.gen(function*() {
    const store = yield* TenantStore
    const tenantsDown = (e: { readonly message: string }) => new SyncTenants.TenantsUnavailable({ message: e.message })
    const stateDown = (e: { readonly message: string }) => new SyncState.SyncStateUnavailable({ message: e.message })
    const noticesDown = (e: { readonly message: string }) => new Notices.NoticesUnavailable({ message: e.message })
    return Context.make(SyncTenants.SyncTenants, SyncTenants.SyncTenants.of({
      tenant: (appId, businessId) => Effect.mapError(store.business(appId, businessId), tenantsDown),
      tenants: (filter) => Effect.mapError(store.businesses(filter), tenantsDown),
      hold: (appId, businessId, attention) => Effect.mapError(Effect.asVoid(store.setStatus(appId, businessId, "attention", attention)), tenantsDown)
    })).pipe(
      Context.add(SyncState.SyncStateStore, SyncState.SyncStateStore.of({
        state: (appId, businessId, resource) => Effect.mapError(store.state(appId, businessId, resource), stateDown),
        states: (appId, businessId) => Effect.mapError(store.states(appId, businessId), stateDown),
        update: (appId, businessId, resource, patch) => Effect.mapError(store.updateState(appId, businessId, resource, patch), stateDown),
        pause: (appId, businessId, resource, reason) => Effect.mapError(store.pauseResource(appId, businessId, resource, reason), stateDown)
      })),
      Context.add(Notices.Notices, Notices.Notices.of({
        recordError: (error) => Effect.mapError(store.recordError(error), noticesDown),
        recentErrors: (limit, appId) => Effect.mapError(store.recentErrors(limit, appId), noticesDown),
        noticeOnce: (appId, businessId, kind) => Effect.mapError(store.noticeOnce(appId, businessId, kind), noticesDown),
        clearNotices: (appId, businessId, prefix) => Effect.mapError(store.clearNotices(appId, businessId, prefix), noticesDown)
      }))
    )
  })
)
