/**
 * apps/sync-server: the multi-tenant sync server. `bin.ts` runs it; these modules compose it.
 */
export * as Admin from "./Admin.ts"
export * as Config from "./Config.ts"
export * as Ownership from "./Ownership.ts"
export * as Secrets from "./Secrets.ts"
export * as Server from "./Server.ts"
export * as SyncEngine from "./SyncEngine.ts"
export * as TenantStore from "./TenantStore.ts"
