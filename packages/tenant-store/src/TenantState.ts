/**
 * The tenant store as a server runs it on one machine: one file (./TenantDatabase.ts) and the
 * stores over it, split by concern: the registry (tenants and grants), the sync state, the
 * notices, and the sync engine's view of the registry.
 */
import { Layer } from "effect"
import type { Notices, SyncState, SyncTenants } from "@ocs/sync"
import type { Sealer } from "./Secrets.ts"
import * as SqliteNotices from "./SqliteNotices.ts"
import * as SqliteSyncState from "./SqliteSyncState.ts"
import { TenantDatabase, type TenantStoreError } from "./TenantDatabase.ts"
import { TenantRegistry } from "./TenantRegistry.ts"

export type Services = TenantRegistry | SyncTenants.SyncTenants | SyncState.SyncStateStore | Notices.Notices

/** `refreshMillis`: see `TenantRegistry.layer`. */
export const layer = (options: { readonly filename: string; readonly sealer: Sealer; readonly refreshMillis?: number | undefined }): Layer.Layer<Services, TenantStoreError> =>
  Layer.mergeAll(
    TenantRegistry.layerSyncTenants.pipe(Layer.provideMerge(TenantRegistry.layer({ sealer: options.sealer, refreshMillis: options.refreshMillis }))),
    SqliteSyncState.layer,
    SqliteNotices.layer
  ).pipe(Layer.provide(TenantDatabase.layer({ filename: options.filename })))
