/**
 * apps/sync-server: the multi-tenant sync server. `bin.ts` runs it; these modules compose it.
 */
export * as Admin from "./http/Admin.ts"
export * as Config from "./boot/Config.ts"
export * as Server from "./http/Server.ts"
