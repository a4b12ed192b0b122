/**
 * A grant's scopes drive the sync (docs/architecture.md §4.32, docs/api-catalogue.md,
 * Authentication 4-5): a resource whose permission was not granted is not pulled (the service
 * would answer ERR_403), and stock reads cover only the granted depots (another depot answers
 * ERR_INVALID_DEPOT_ID). Pure: the engine applies it to a tenant's resources before planning.
 *
 * A tenant registered without permissions (an operator's pasted token, before the grant flow)
 * keeps every resource: its scopes are unknown, and the service still says ERR_403 by calling.
 */
import { Ids, Operation } from "@ocs/protocol"

/** What a tenant was granted, as the registry keeps it. */
export interface Grant {
  readonly permissions?: ReadonlyArray<string> | undefined
  readonly depots?: ReadonlyArray<string> | undefined
}

/** A resource the grant leaves out, and what fixes it. */
export interface NotGranted {
  readonly resource: string
  readonly permission: string
  readonly fix: string
}

/**
 * The permission (data page) an operation needs: its declared one, else as the service groups
 * them: business/* and app/* need none, product/inventory "inventory", any other its resource.
 */
export const permissionOf = (op: Pick<Operation.Operation<unknown>, "resource" | "operation"> & { readonly permission?: string | undefined }): string | undefined =>
  op.permission ?? (op.resource === "business" || op.resource === "app"
    ? undefined
    : op.resource === "product" && op.operation === "inventory"
    ? "inventory"
    : op.resource)

const FIX = "the business must connect again and tick this permission (the connect link)"

const isInventory = (op: Operation.Operation<unknown>) => op.entity?.kind === "inventory"

/** The operations the grant allows, stock narrowed to the granted depots; and those it leaves out. */
export const apply = (
  operations: ReadonlyArray<Operation.Operation<unknown>>,
  grant: Grant
): { readonly operations: ReadonlyArray<Operation.Operation<unknown>>; readonly notGranted: ReadonlyArray<NotGranted> } => {
  const permissions = grant.permissions ?? []
  const depots = grant.depots ?? []
  if (permissions.length === 0 && depots.length === 0) return { operations, notGranted: [] }
  const kept: Array<Operation.Operation<unknown>> = []
  const notGranted: Array<NotGranted> = []
  for (const op of operations) {
    const permission = permissionOf(op)
    const allowed = permissions.length === 0 || permission === undefined || permissions.includes(permission) ||
      permissions.includes(`${op.resource}/${op.operation}`) || permissions.includes("*")
    if (!allowed) {
      notGranted.push({ resource: Operation.resourceKey(op), permission: permission!, fix: FIX })
      continue
    }
    const asked = op.filters?.["depotIds"]
    if (depots.length === 0 || !isInventory(op) || !Array.isArray(asked)) {
      kept.push(op)
      continue
    }
    // Stock narrowed to depots (the tenant's setting): those of them within the grant.
    const inGrant = asked.map((d) => Ids.normalize(d) ?? String(d)).filter((d) => depots.includes(d))
    if (inGrant.length === 0) {
      notGranted.push({ resource: Operation.resourceKey(op), permission: "depots", fix: "the business must connect again and tick the depots to read" })
      continue
    }
    kept.push(inGrant.length === asked.length ? op : Operation.productInventory(inGrant) as Operation.Operation<unknown>)
  }
  return { operations: kept, notGranted }
}
