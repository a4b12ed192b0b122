/**
 * Which operations are synced: the server's, named in its configuration, and a tenant's own
 * when its settings name resources or depots.
 */
import { Effect, Schema } from "effect"
import { Catalogue, Operation } from "@ocs/protocol"
import type { TenantSettings } from "./TenantSettings.ts"

export class UnknownResource extends Schema.TaggedError<UnknownResource>()("UnknownResource", {
  name: Schema.String,
  message: Schema.String
}) {}

/**
 * The operations to sync: the configured names (a typed read by key
 * "pos:/v3.0/bill/list", path "bill/list" or record kind "bill"; any other catalogued read
 * that needs no filter, by key or path, into the documents table), then every declared list
 * operation (each declaration, fixed filters included, is its own resource).
 */
export const resolve = (
  names: ReadonlyArray<string>,
  declared: ReadonlyArray<Operation.OperationSpec>
): Effect.Effect<ReadonlyArray<Operation.Operation<unknown>>, UnknownResource> => {
  // The deletion feeds (order/deleted, bill/deleted) are typed too: named, they give deletions.
  const typed = [...Operation.defaultReads, ...Operation.feeds] as ReadonlyArray<Operation.Operation<unknown>>
  const extra = declared.map((d) => Operation.make(d)).filter((op) => op.kind === "list") as ReadonlyArray<Operation.Operation<unknown>>
  const path = (o: { readonly resource: string; readonly operation: string }) => `${o.resource}/${o.operation}`
  const catalogued = (name: string) =>
    // Not the page service's: its reads follow the tenant's pages (./PageService.ts), and one
    // named alone would read every page of the business.
    Catalogue.entries.find((e) => e.family === "pos" && e.shape === "list" && (e.requiredFilters ?? []).length === 0 && (Catalogue.keyOf(e) === name || path(e) === name))
  return Effect.forEach(names, (name) => {
    const op = typed.find((o) => Operation.key(o) === name || path(o) === name || o.entity?.kind === name)
    if (op !== undefined) return Effect.succeed(op)
    const entry = catalogued(name)
    return entry !== undefined
      ? Effect.succeed(Operation.fromCatalogue(entry) as Operation.Operation<unknown>)
      : Effect.fail(new UnknownResource({ name, message: `no list operation named ${JSON.stringify(name)}; typed: ${typed.map(path).join(", ")}; any read of docs/api-catalogue.md that needs no filter can be named by path; declare others under "operations"` }))
  }).pipe(Effect.map((ops) => [...ops, ...extra]))
}

/**
 * A tenant's operations: its settings' resources (resolved once per distinct list) and depots,
 * else the server's.
 */
export const forTenants = (server: ReadonlyArray<Operation.Operation<unknown>>, declared: ReadonlyArray<Operation.OperationSpec>) => {
  const resolved = new Map<string, ReadonlyArray<Operation.Operation<unknown>>>()
  return (settings: TenantSettings): Effect.Effect<ReadonlyArray<Operation.Operation<unknown>>, UnknownResource> =>
    Effect.gen(function*() {
      if (settings.resources === undefined && settings.depots === undefined) return server
      const cacheKey = JSON.stringify([settings.resources ?? null, settings.depots ?? null])
      const cached = resolved.get(cacheKey)
      if (cached !== undefined) return cached
      const base = settings.resources === undefined ? server : yield* resolve(settings.resources, declared)
      const depots = settings.depots
      // Stock reads narrowed to the tenant's depots (a partial read: it never deletes).
      const ops = depots === undefined ? base : base.map((op) => op.entity?.kind === "inventory" && op.filters === undefined ? Operation.productInventory(depots) as Operation.Operation<unknown> : op)
      resolved.set(cacheKey, ops)
      return ops
    })
}
