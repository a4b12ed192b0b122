/**
 * Which pages of the page service (Vpage, docs/api-catalogue.md §9) a tenant's sync reads: the
 * pages its grant names (`pageIds`, kept by the tenant registry since the grant flow), else the
 * pages its settings name; both given, the configured ones within the grant. Never others: a
 * read naming no page would list every page of the business. Pure: the engine adds these reads
 * to the tenant's resources after the grant's permissions were applied (the grant's pages are
 * the page service's own permission).
 */
import { Ids, Operation } from "@ocs/protocol"
import type { SyncTenant } from "./SyncTenants.ts"

const norm = (ids: ReadonlyArray<string | number>): ReadonlyArray<string> => ids.map((id) => Ids.normalize(id) ?? String(id))

/** The pages to read, in the order given; empty: the tenant has no page-service reads. */
export const pagesOf = (t: Pick<SyncTenant, "pages" | "settings">): ReadonlyArray<string> => {
  const granted = norm(t.pages ?? [])
  const configured = t.settings.pages === undefined ? undefined : norm(t.settings.pages)
  if (configured === undefined) return granted
  return granted.length === 0 ? configured : configured.filter((p) => granted.includes(p))
}

/** The tenant's page-service reads (`Operation.pageServiceReads` of its pages). */
export const readsOf = (t: Pick<SyncTenant, "pages" | "settings">): ReadonlyArray<Operation.Operation<unknown>> => {
  const pages = pagesOf(t)
  return pages.length === 0 ? [] : Operation.pageServiceReads(pages)
}
