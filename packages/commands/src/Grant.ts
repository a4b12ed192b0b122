/**
 * Commands checked against the tenant's grant (docs/architecture.md §4.31, §4.32;
 * docs/api-catalogue.md, Authentication 4-5): the permissions and depots a business ticked when
 * it connected are fixed until it connects again, and a call outside them answers ERR_403 or
 * ERR_INVALID_DEPOT_ID. A command needing a permission or naming a depot the grant lacks is
 * refused before anything is stored or sent, naming what is missing.
 *
 * Each kind needs the permission of its write (the catalogue's `permission`: product.add and
 * product.edit "product", order.* "order", customer.add "customer", bill.addRetail "bill", the
 * stock movements "inventory"), matched as `@ocs/sync` `Scopes.ts` matches a resource: the
 * permission, the operation's `resource/operation`, or "*". A tenant registered without scopes
 * (a pasted token) is not checked: its scopes are unknown, and the service still answers.
 */
import { Catalogue, CommandKind, Ids } from "@ocs/protocol"
import { Schema } from "effect"

/** What a tenant was granted, as the registry keeps it. */
export interface Grant {
  readonly permissions: ReadonlyArray<string>
  readonly depots: ReadonlyArray<string>
}

/** The grant lacks the command's permission or depot (HTTP 403): nothing was stored or sent. */
export class NotGranted extends Schema.TaggedError<NotGranted>()("NotGranted", {
  /** The permission the command needs and the grant lacks. */
  permission: Schema.optional(Schema.String),
  /** The depot the command names and the grant lacks. */
  depotId: Schema.optional(Schema.String),
  path: Schema.String,
  message: Schema.String
}) {}

const FIX = "the business must connect again (the connect link) and tick it"

/** The permission a kind needs, as the reference names it. */
export const permissionOf = (kind: CommandKind.KindName): string => Catalogue.write(kind).permission

/** The depots a payload names, with their paths: `depotId` (bills, stock movements), `info.depotId` (order.add). */
export const depotsOf = (payload: unknown): ReadonlyArray<{ readonly path: string; readonly depotId: string }> => {
  const out: Array<{ readonly path: string; readonly depotId: string }> = []
  const p = payload as { readonly depotId?: unknown; readonly info?: { readonly depotId?: unknown } } | null
  const add = (path: string, value: unknown) => {
    if (value === undefined || value === null) return
    out.push({ path, depotId: Ids.normalize(value) ?? String(value) })
  }
  add("payload.depotId", p?.depotId)
  add("payload.info.depotId", p?.info?.depotId)
  return out
}

/** Why the grant refuses the command; undefined when it allows it (or its scopes are unknown). */
export const check = (kind: CommandKind.KindName, payload: unknown, grant: Grant): NotGranted | undefined => {
  if (grant.permissions.length > 0) {
    const permission = permissionOf(kind)
    const op = CommandKind.kinds[kind].operation
    const allowed = grant.permissions.includes(permission) ||
      grant.permissions.includes(`${op.resource}/${op.operation}`) || grant.permissions.includes("*")
    if (!allowed) {
      return new NotGranted({
        permission,
        path: "kind",
        message: `${kind} needs the permission "${permission}", which this business did not grant: ${FIX}`
      })
    }
  }
  if (grant.depots.length > 0) {
    for (const { depotId, path } of depotsOf(payload)) {
      if (!grant.depots.includes(depotId)) {
        return new NotGranted({
          depotId,
          path,
          message: `depot ${depotId} was not granted by this business (granted: ${grant.depots.join(", ")}): ${FIX}`
        })
      }
    }
  }
  return undefined
}
