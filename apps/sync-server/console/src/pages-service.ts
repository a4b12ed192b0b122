/**
 * The page service (docs/api-catalogue.md §9) of one tenant: its pages (with when their access
 * expires), each page's conversations, the latest interaction first, and a conversation's
 * messages in the order they were written. Read from the admin routes under `.../vpage/`.
 */
import { html, useEffect, useState } from "./html.ts"
import { api, type Live, time } from "./api.ts"

interface Row { readonly [k: string]: any }

/** GETs `path` (none when undefined) whenever it changes. */
const useGet = <A>(path: string | undefined): { data: A | undefined; error: string | undefined } => {
  const [data, setData] = useState<A | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  useEffect(() => {
    setData(undefined)
    setError(undefined)
    if (path === undefined) return
    let current = true
    api<A>(path).then((d) => current && setData(d), (e: Error) => current && setError(e.message))
    return () => void (current = false)
  }, [path])
  return { data, error }
}

const link = (q: Record<string, string | undefined>) =>
  `#/page-service?${new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== "")).toString()}`

const Loading = ({ state }: { state: { data: unknown; error: string | undefined } }) =>
  state.error !== undefined ? html`<p class="failure" role="alert">${state.error}</p>` : state.data === undefined ? html`<p>Loading…</p>` : null

const Messages = ({ base, conversation }: { base: string; conversation: string }) => {
  const messages = useGet<{ items: ReadonlyArray<Row> }>(`${base}/conversations/${encodeURIComponent(conversation)}/messages?limit=200`)
  if (messages.data === undefined) return html`<${Loading} state=${messages} />`
  if (messages.data.items.length === 0) return html`<p class="empty">No message of this conversation was read yet.</p>`
  return html`<ol class="history" data-testid="vpage-messages">${messages.data.items.map((m) => html`<li>
    <span class="offset">${time(m.createdAtMs)}</span> <b>${m.senderName ?? m.senderId ?? ""}</b>${m.createdById === null ? "" : html` <span class="badge active">staff</span>`} ${m.message ?? ""}</li>`)}</ol>`
}

export const PageService = ({ live, query }: { live: Live; query: URLSearchParams }) => {
  const tenants = live.state === "live" ? live.snapshot.tenants.list : []
  const tenant = query.get("tenant") ?? (tenants[0] === undefined ? "" : `${tenants[0].appId}:${tenants[0].businessId}`)
  const [appId, businessId] = tenant.split(":")
  const base = `/admin/tenants/${appId}/${businessId}/vpage`
  const page = query.get("page") ?? undefined
  const conversation = query.get("conversation") ?? undefined
  const pages = useGet<{ items: ReadonlyArray<Row> }>(tenant === "" ? undefined : `${base}/pages`)
  const conversations = useGet<{ items: ReadonlyArray<Row> }>(
    tenant === "" ? undefined : `${base}/conversations?limit=100${page === undefined ? "" : `&pageId=${encodeURIComponent(page)}`}`
  )
  return html`
    <h1>Page service${tenant === "" ? "" : html` <small>${tenant}</small>`}</h1>
    ${tenants.length > 1 ? html`<nav class="tabs" aria-label="Tenants">${tenants.map((t) => {
      const k = `${t.appId}:${t.businessId}`
      return html`<a href=${link({ tenant: k })} aria-current=${k === tenant ? "page" : undefined}>${k}</a>`
    })}</nav>` : null}
    ${tenant === "" ? html`<p class="empty">No tenant yet.</p>` : html`
      <h2>Pages</h2>
      <${Loading} state=${pages} />
      ${pages.data === undefined ? null : pages.data.items.length === 0
        ? html`<p class="empty">No page read: the grant names no page (pageIds) and the tenant's settings name none.</p>`
        : html`<div class="scroll" tabindex="0" role="region" aria-label="Pages"><table data-testid="vpage-pages"><thead><tr><th>page</th><th>name</th><th>access expires</th></tr></thead><tbody>
          ${pages.data.items.map((p) => html`<tr data-id=${p.id}><td><a href=${link({ tenant, page: p.id })} aria-current=${p.id === page ? "page" : undefined}>${p.id}</a></td><td>${p.name ?? ""}</td>
            <td>${p.expiredAtMs !== null && p.expiredAtMs <= Date.now() ? html`<span class="badge attention">expired ${time(p.expiredAtMs)}</span>` : time(p.expiredAtMs)}</td></tr>`)}
        </tbody></table></div>`}
      <h2>Conversations${page === undefined ? "" : ` of page ${page}`}</h2>
      <${Loading} state=${conversations} />
      ${conversations.data === undefined ? null : conversations.data.items.length === 0 ? html`<p class="empty">No conversation read yet.</p>`
        : html`<div class="scroll" tabindex="0" role="region" aria-label="Conversations"><table data-testid="vpage-conversations"><thead><tr><th>customer</th><th>last message</th><th>status</th><th>last interaction</th></tr></thead><tbody>
          ${conversations.data.items.map((c) => html`<tr data-id=${c.id}><td><a href=${link({ tenant, page, conversation: c.id })}>${c.pageUserName ?? c.pageUserId ?? c.id}</a>${c.hasPhone === true ? " ☎" : ""}</td>
            <td>${c.lastMessage ?? ""}</td><td>${c.status === "1" ? html`<span class="badge attention">unread</span>` : c.status === "2" ? "read" : c.status ?? ""}</td><td>${time(c.updatedAtMs)}</td></tr>`)}
        </tbody></table></div>`}
      ${conversation === undefined ? null : html`<h2>Messages of ${conversation}</h2><${Messages} key=${conversation} base=${base} conversation=${conversation} />`}
    `}
  `
}
