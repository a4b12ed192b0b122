/**
 * "Connect a business" (docs/architecture.md §4.32): the connect link of each application to
 * send to a business, each tenant's scopes and token age, and the grants about to expire with
 * the link to send again.
 */
import { html, useEffect, useState } from "./html.ts"
import { ago, api, type Live, tenantPath, time } from "./api.ts"

interface App {
  readonly appId: string
  readonly enabled: boolean
  readonly connect: boolean
  readonly publicUrl: string | null
}

interface Grant {
  readonly appId: string
  readonly businessId: string
  readonly status: string
  readonly permissions: ReadonlyArray<string>
  readonly depots: ReadonlyArray<string>
  readonly grantedAt: number | null
  readonly expiresAt: number | null
  readonly expiresInDays: number | null
}

/** Expiry warnings are given 30 days ahead: the console shows the same grants as expiring. */
const EXPIRING_DAYS = 30

export const connectLink = (app: App): string | undefined =>
  app.connect && app.publicUrl !== null ? `${app.publicUrl.replace(/\/+$/, "")}/connect/${app.appId}` : undefined

export const Connect = ({ live }: { live: Live }) => {
  const [apps, setApps] = useState<ReadonlyArray<App> | undefined>(undefined)
  const [tenants, setTenants] = useState<ReadonlyArray<Grant> | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const at = live.state === "live" ? live.snapshot.at : 0
  useEffect(() => {
    let current = true
    Promise.all([api<{ apps: ReadonlyArray<App> }>("/admin/apps"), api<{ tenants: ReadonlyArray<Grant> }>("/admin/tenants")]).then(
      ([a, t]) => current && (setApps(a.apps), setTenants(t.tenants), setError(undefined)),
      (e: Error) => current && setError(e.message)
    )
    return () => void (current = false)
  }, [at])
  if (apps === undefined || tenants === undefined) {
    return html`<h1>Connect a business</h1>${error === undefined ? html`<p>Loading…</p>` : html`<p class="failure" role="alert">${error}</p>`}`
  }
  const links = new Map(apps.map((a) => [a.appId, connectLink(a)]))
  const expiring = tenants.filter((t) => t.expiresInDays !== null && t.expiresInDays <= EXPIRING_DAYS)
  return html`
    <h1>Connect a business</h1>
    <p>Send a business the link of its application: it opens the service's grant page, the business picks what to share, and comes back connected.</p>
    <div class="scroll" tabindex="0" role="region" aria-label="Connect links"><table data-testid="connect-links">
      <thead><tr><th>application</th><th>link to send</th></tr></thead>
      <tbody>${apps.map((a) => html`<tr><td>${a.appId}</td><td>${links.get(a.appId) === undefined
        ? html`<span class="empty">not set up: give the application its <code>secretKey</code> and <code>publicUrl</code> (POST /admin/apps)</span>`
        : html`<code data-testid="connect-link">${links.get(a.appId)}</code>`}</td></tr>`)}</tbody>
    </table></div>
    <h2>Expiring within ${EXPIRING_DAYS} days</h2>
    ${expiring.length === 0 ? html`<p class="empty">No grant expires within ${EXPIRING_DAYS} days.</p>` : html`<ul data-testid="expiring">${expiring.map((t) =>
      html`<li><a href=${tenantPath(t)}>${t.appId}:${t.businessId}</a> ${t.expiresInDays !== null && t.expiresInDays < 0 ? "expired" : `expires in ${t.expiresInDays} days`}: send ${links.get(t.appId) === undefined ? "a new token (the application has no connect link)" : html`<code>${links.get(t.appId)}</code>`}</li>`)}</ul>`}
    <h2>Grants</h2>
    <div class="scroll" tabindex="0" role="region" aria-label="Grants"><table data-testid="grants">
      <thead><tr><th>tenant</th><th>status</th><th>permissions</th><th>depots</th><th>granted</th><th>expires</th></tr></thead>
      <tbody>${tenants.map((t) => html`<tr>
        <td><a href=${tenantPath(t)}>${t.appId}:${t.businessId}</a></td>
        <td>${t.status}</td>
        <td>${t.permissions.length === 0 ? "not known (a registered token)" : t.permissions.join(", ")}</td>
        <td>${t.depots.length === 0 ? "all" : t.depots.join(", ")}</td>
        <td>${t.grantedAt === null ? "unknown" : ago(t.grantedAt)}</td>
        <td>${t.expiresAt === null ? "no expiry given" : time(t.expiresAt)}</td>
      </tr>`)}</tbody>
    </table></div>
  `
}
