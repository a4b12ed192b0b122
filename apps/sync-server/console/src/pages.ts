/** The console's pages. Each takes the live snapshot; pages that need more ask the admin API. */
import { html, useEffect, useState } from "./html.ts"
import { advice, ago, api, type Key, type Live, rate, type Snapshot, type Tenant, tenantPath, time } from "./api.ts"
import { OverviewCharts, Spark, TenantCharts, useBudgetSeries } from "./charts.ts"
import { CommandCounts } from "./commands.ts"

const Empty = ({ children }: { children: unknown }) => html`<p class="empty">${children}</p>`
const Failure = ({ error }: { error: string | undefined }) => error === undefined ? null : html`<p class="failure" role="alert">${error}</p>`
const Status = ({ status }: { status: string }) => html`<span class=${`badge ${status}`}>${status}</span>`
const Table = ({ children, label }: { children: unknown; label: string }) =>
  html`<div class="scroll" tabindex="0" role="region" aria-label=${label}><table>${children}</table></div>`

/** Re-reads `path` whenever the snapshot moves (once a second while live). */
const useLoad = <A>(path: string | undefined, live: Live): { data: A | undefined; error: string | undefined; reload: () => void } => {
  const [data, setData] = useState<A | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [n, setN] = useState(0)
  const at = live.state === "live" ? live.snapshot.at : 0
  useEffect(() => {
    if (path === undefined) return
    let current = true
    api<A>(path).then((d) => current && (setData(d), setError(undefined)), (e: Error) => current && setError(e.message))
    return () => void (current = false)
  }, [path, at, n])
  useEffect(() => setData(undefined), [path])
  return { data, error, reload: () => setN((x) => x + 1) }
}

/** Seconds until `until` on the server's clock, ticking on its own between snapshots. */
export const Countdown = ({ until, skewMs }: { until: number; skewMs: number }) => {
  const [, tick] = useState(0)
  useEffect(() => {
    const t = setInterval(() => tick((x) => x + 1), 250)
    return () => clearInterval(t)
  }, [])
  const left = Math.max(0, Math.ceil((until - (Date.now() + skewMs)) / 1000))
  return html`<span class="countdown" data-seconds=${left} aria-live="off">${left > 0 ? `locked, ${left} s left` : "unlocking"}</span>`
}

// overview -------------------------------------------------------------------------------

export const Overview = ({ live }: { live: Live }) => {
  if (live.state !== "live") return live.state === "connecting" ? html`<p>Connecting…</p>` : null
  const s = live.snapshot
  const attention = s.tenants.list.filter((t) => t.status !== "active" || t.webhookSilent === true)
  const down = s.loops.filter((l) => !l.up)
  return html`
    <h1>Overview</h1>
    <section class="cards" aria-label="Figures">
      <a class="card" href="#/tenants?status=active"><b>${s.tenants.byStatus.active}</b> active</a>
      <a class=${`card ${s.tenants.byStatus.attention > 0 ? "bad" : ""}`} href="#/tenants?status=attention"><b>${s.tenants.byStatus.attention}</b> need attention</a>
      <a class="card" href="#/tenants?status=paused"><b>${s.tenants.byStatus.paused}</b> paused</a>
      <div class="card"><b data-testid="webhook-rate">${rate(s, live.previous, (x) => x.webhooks.accepted)}</b> webhooks/s</div>
      <div class="card"><b>${rate(s, live.previous, (x) => x.sync.pages)}</b> pulls/s (pages)</div>
      <a class=${`card ${s.keys.locked > 0 ? "warn" : ""}`} href="#/limits"><b>${s.keys.locked}</b> locked keys of ${s.keys.total}</a>
      <div class=${`card ${down.length > 0 ? "bad" : ""}`}><b>${s.loops.length - down.length}/${s.loops.length}</b> loops up</div>
    </section>
    <h2>Activity</h2>
    <${OverviewCharts} />
    <h2>Needs a look</h2>
    ${attention.length === 0
      ? html`<${Empty}>Every tenant is active and its webhooks arrive.<//>`
      : html`<ul class="list">${attention.map((t) => html`<li><a href=${tenantPath(t)}>${t.appId}:${t.businessId}</a> <${Status} status=${t.status} /> ${
        t.attention?.message ?? (t.webhookSilent === true ? `no webhook since ${ago(t.lastWebhookAt)}` : "")}</li>`)}</ul>`}
    <h2>Loops</h2>
    <${Table} label="Loops"><thead><tr><th>loop</th><th>state</th><th>restarts</th><th>last error</th></tr></thead><tbody>
      ${s.loops.map((l) => html`<tr><td>${l.name}</td><td><${Status} status=${l.up ? "up" : "down"} /></td><td>${l.restarts}</td><td>${l.lastError ?? ""}</td></tr>`)}
    </tbody><//>
    <h2>Recent errors</h2>
    ${s.errors.length === 0 ? html`<${Empty}>No errors recorded.<//>` : html`<${Table} label="Recent errors"><thead><tr><th>when</th><th>tenant</th><th>resource</th><th>error</th></tr></thead><tbody>
      ${s.errors.map((e) => html`<tr><td>${ago(e.at)}</td><td>${e.businessId === null ? e.appId : html`<a href=${tenantPath({ appId: e.appId, businessId: e.businessId })}>${e.appId}:${e.businessId}</a>`}</td><td>${e.resource ?? ""}</td><td><code>${e.tag}</code> ${e.message}</td></tr>`)}
    </tbody><//>`}
  `
}

// tenants --------------------------------------------------------------------------------

export const Tenants = ({ live, query }: { live: Live; query: URLSearchParams }) => {
  const [search, setSearch] = useState(query.get("q") ?? "")
  const status = query.get("status") ?? ""
  const { data, error } = useLoad<{ tenants: ReadonlyArray<Tenant> }>(`/admin/tenants${status === "" ? "" : `?status=${status}`}`, live)
  const setStatus = (v: string) => (location.hash = `#/tenants${v === "" ? "" : `?status=${v}`}`)
  const progress = new Map((live.state === "live" ? live.snapshot.tenants.list : []).map((t) => [`${t.appId}:${t.businessId}`, t.sync]))
  const shown = (data?.tenants ?? []).filter((t) => search === "" || `${t.appId}:${t.businessId}`.includes(search.trim()))
  return html`
    <h1>Tenants</h1>
    <form class="filters" role="search" onSubmit=${(e: Event) => e.preventDefault()}>
      <label>Search <input type="search" name="q" placeholder="appId or businessId" value=${search} onInput=${(e: Event) => setSearch((e.target as HTMLInputElement).value)} /></label>
      <label>Status <select name="status" value=${status} onChange=${(e: Event) => setStatus((e.target as HTMLSelectElement).value)}>
        <option value="">any</option><option value="active">active</option><option value="attention">needs attention</option><option value="paused">paused</option>
      </select></label>
    </form>
    <${Failure} error=${error} />
    ${data === undefined ? (error === undefined ? html`<p>Loading…</p>` : null)
      : shown.length === 0 ? html`<${Empty}>${data.tenants.length === 0 ? "No tenants here. Register one with POST /admin/tenants (see the README)." : "No tenant matches the search."}<//>`
      : html`<${Table} label="Tenants"><thead><tr><th>tenant</th><th>status</th><th>sync</th><th>last webhook</th><th>token expires</th></tr></thead><tbody>
        ${shown.map((t) => {
          const p = progress.get(`${t.appId}:${t.businessId}`)
          return html`<tr><td><a href=${tenantPath(t)}>${t.appId}:${t.businessId}</a></td><td><${Status} status=${t.status} /></td>
            <td>${p == null ? "–" : `${p.complete}/${p.resources} complete, ${p.pages} pages`}</td>
            <td>${ago(t.lastWebhookAt)}${t.webhookSilent === true ? html` <${Status} status="silent" />` : ""}</td>
            <td>${t.expiresInDays === null ? "no expiry" : `${t.expiresInDays} days`}</td></tr>`
        })}
      </tbody><//>`}
  `
}

interface Detail extends Omit<Tenant, "sync"> {
  readonly sync: ReadonlyArray<{
    readonly resource: string
    readonly paused: { readonly code: string; readonly message: string } | null
    readonly cursor: string | null
    readonly fullStartedAt: number | null
    readonly fullCompletedAt: number | null
    readonly lastRunAt: number | null
    readonly pages: number
    readonly records: number
    readonly lastError: string | null
  }>
  readonly counts: Record<string, number>
}

/** What a sync-now answer says, in a line. */
const syncSummary = (reports: ReadonlyArray<{ readonly mode: string; readonly pages: number; readonly records: number; readonly outcome: string }>) => {
  const ran = reports.filter((r) => r.mode !== "skipped")
  const pages = ran.reduce((n, r) => n + r.pages, 0)
  const records = ran.reduce((n, r) => n + r.records, 0)
  const skipped = reports.length - ran.length
  const failed = ran.filter((r) => r.outcome !== "done").length
  return `Sync ran: ${pages} pages, ${records} records` +
    (skipped > 0 ? `; ${skipped} resources were already running or not due` : "") +
    (failed > 0 ? `; ${failed} did not finish (see Sync progress)` : "") + "."
}

export const TenantDetail = ({ live, appId, businessId }: { live: Live; appId: string; businessId: string }) => {
  const path = `/admin/tenants/${appId}/${businessId}`
  const { data: t, error, reload } = useLoad<Detail>(path, live)
  const [busy, setBusy] = useState<string | undefined>(undefined)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const act = (what: string, action: string) => {
    setBusy(what)
    setMessage(undefined)
    api(`${path}/${action}`, "POST").then(
      (r: any) => setMessage(r.reports === undefined ? `Tenant ${r.status}.` : syncSummary(r.reports)),
      (e: Error) => setMessage(`Failed: ${e.message}`)
    ).finally(() => (setBusy(undefined), reload()))
  }
  if (t === undefined) return html`<h1>Tenant ${appId}:${businessId}</h1><${Failure} error=${error} />${error === undefined ? html`<p>Loading…</p>` : null}`
  const pages = t.sync.reduce((n, s) => n + s.pages, 0)
  return html`
    <h1>Tenant ${t.appId}:${t.businessId} <${Status} status=${t.status} /></h1>
    <${Failure} error=${error} />
    ${t.status === "attention" && t.attention !== null ? html`<div class="attention" role="alert"><p><b>Needs attention:</b> <code>${t.attention.code}</code> ${t.attention.message} (${ago(t.attention.at)})</p><p>${advice(t.attention.code)}</p></div>` : null}
    <div class="actions">
      ${t.status !== "active"
        ? html`<button type="button" disabled=${busy !== undefined} onClick=${() => act("resume", "resume")}>Resume</button>`
        : html`<button type="button" disabled=${busy !== undefined} onClick=${() => act("pause", "pause")}>Pause</button>`}
      <button type="button" disabled=${busy !== undefined || t.status === "paused"} onClick=${() => act("sync", "sync")}>${busy === "sync" ? "Syncing…" : "Sync now"}</button>
      <button type="button" disabled=${busy !== undefined || t.status === "paused"} onClick=${() => act("full", "sync?full=true")} title="Read every resource again from the first page">${busy === "full" ? "Syncing…" : "Full sync"}</button>
      <a href=${`#/data?tenant=${t.appId}:${t.businessId}`}>Browse data</a>
      <a href=${`#/events?tenant=${t.appId}:${t.businessId}`}>Event browser</a>
      <a href=${`#/tenants/${t.appId}/${t.businessId}/commands`}>Commands</a>
      <span role="status" class="message">${message ?? ""}</span>
    </div>
    <dl class="facts">
      <dt>Status</dt><dd data-testid="tenant-status">${t.status}</dd>
      <dt>Token expires</dt><dd>${t.expiresAt === null ? "no expiry given" : `${time(t.expiresAt)} (in ${t.expiresInDays} days)`}</dd>
      <dt>Webhooks</dt><dd>${t.lastWebhookAt === null ? "none received yet" : `last ${ago(t.lastWebhookAt)}`}${t.webhookSilent === true ? " (silent: check the callback URL and webhooksEnabled)" : ""}</dd>
      <dt>Pages pulled</dt><dd data-testid="pages-total">${pages}</dd>
    </dl>
    <h2>Activity</h2>
    <${TenantCharts} appId=${t.appId} businessId=${t.businessId} />
    <h2>Sync progress</h2>
    ${t.sync.length === 0 ? html`<${Empty}>No sync has run yet.<//>` : html`<${Table} label="Sync progress"><thead><tr><th>resource</th><th>state</th><th>pages</th><th>records</th><th>cursor</th><th>last run</th><th>last error</th></tr></thead><tbody>
      ${t.sync.map((s) => html`<tr><td>${s.resource}</td>
        <td>${s.paused !== null ? html`<${Status} status="paused" /> ${s.paused.message}` : s.cursor !== null ? html`<${Status} status="running" />` : s.fullCompletedAt !== null ? html`<${Status} status="complete" />` : html`<${Status} status="pending" />`}</td>
        <td>${s.pages}</td><td>${s.records}</td><td><code class="cursor" title=${s.cursor ?? ""}>${s.cursor === null ? "–" : s.cursor.slice(0, 24)}</code></td>
        <td>${ago(s.lastRunAt)}</td><td>${s.lastError ?? ""}</td></tr>`)}
    </tbody><//>`}
    <${CommandCounts} live=${live} appId=${t.appId} businessId=${t.businessId} />
    <h2>Read models</h2>
    <dl class="facts counts">${Object.entries(t.counts).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
  `
}

// rate limits ----------------------------------------------------------------------------

export const Limits = ({ live }: { live: Live }) => {
  const history = useBudgetSeries()
  if (live.state !== "live") return null
  const keys: ReadonlyArray<Key> = live.snapshot.keys.list
  return html`
    <h1>Rate limits</h1>
    <p>Budgets per appId + businessId + operation URL. A locked key is not called until its lock ends.</p>
    ${keys.length === 0 ? html`<${Empty}>No key has been called yet.<//>` : html`<${Table} label="Rate-limit keys"><thead><tr><th>key</th><th>budget used</th><th>last hour</th><th>calls</th><th>locks</th><th>queue</th><th>lock</th></tr></thead><tbody>
      ${keys.map((k) => html`<tr class=${k.lockedUntil === undefined ? "" : "locked"} data-key=${k.key}><td><code>${k.key}</code></td>
        <td><meter min="0" max=${k.limit} value=${k.recentCalls} aria-label="budget used"></meter> ${k.recentCalls}/${k.limit} per ${Math.round(k.windowMs / 1000)} s</td>
        <td>${history.has(k.key) ? html`<${Spark} values=${history.get(k.key)} label="budget used" />` : "–"}</td>
        <td>${k.calls}</td><td>${k.locks}</td><td>${k.queueDepth}</td>
        <td>${k.lockedUntil === undefined ? "–" : html`<${Countdown} until=${k.lockedUntil} skewMs=${live.skewMs} />`}</td></tr>`)}
    </tbody><//>`}
  `
}

// event browser --------------------------------------------------------------------------

interface History {
  readonly entityId: string
  readonly matched: number
  readonly records: ReadonlyArray<{ readonly offset: number; readonly id: string; readonly receivedAt: number; readonly source: string; readonly type: string; readonly events: ReadonlyArray<string>; readonly body: string }>
}

export const Events = ({ live, query }: { live: Live; query: URLSearchParams }) => {
  const tenants = live.state === "live" ? live.snapshot.tenants.list : []
  const tenant = query.get("tenant") ?? (tenants[0] === undefined ? "" : `${tenants[0].appId}:${tenants[0].businessId}`)
  const entity = query.get("entity") ?? ""
  const [draft, setDraft] = useState(entity)
  const [appId, businessId] = tenant.split(":")
  const [history, setHistory] = useState<History | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [products, setProducts] = useState<ReadonlyArray<{ id: string; name: string }>>([])
  const go = (t: string, e: string) => (location.hash = `#/events?tenant=${t}${e === "" ? "" : `&entity=${encodeURIComponent(e)}`}`)
  useEffect(() => {
    if (appId === undefined || businessId === undefined || tenant === "") return
    api<{ items: ReadonlyArray<any> }>(`/admin/tenants/${appId}/${businessId}/products?limit=8`).then(
      (r) => setProducts(r.items.map((p) => ({ id: String(p.id ?? p.productId), name: String(p.name ?? "") }))),
      () => setProducts([])
    )
  }, [tenant])
  useEffect(() => {
    setHistory(undefined)
    setError(undefined)
    if (entity === "" || tenant === "") return
    api<History>(`/admin/tenants/${appId}/${businessId}/history/${encodeURIComponent(entity)}`).then(setHistory, (e: Error) => setError(e.message))
  }, [tenant, entity])
  return html`
    <h1>Event browser</h1>
    <form class="filters" onSubmit=${(e: Event) => (e.preventDefault(), go(tenant, draft.trim()))}>
      <label>Tenant <select name="tenant" value=${tenant} onChange=${(e: Event) => go((e.target as HTMLSelectElement).value, "")}>
        ${tenants.length === 0 ? html`<option value="">no tenants</option>` : tenants.map((t) => html`<option value=${`${t.appId}:${t.businessId}`}>${t.appId}:${t.businessId}</option>`)}
      </select></label>
      <label>Entity id <input name="entity" inputmode="numeric" placeholder="product, order, bill or customer id" value=${draft} onInput=${(e: Event) => setDraft((e.target as HTMLInputElement).value)} /></label>
      <button type="submit">Show history</button>
    </form>
    ${products.length === 0 ? null : html`<p class="suggest">Products: ${products.map((p) => html`<a href=${`#/events?tenant=${tenant}&entity=${p.id}`}>${p.id}</a> `)}</p>`}
    <${Failure} error=${error} />
    ${entity === "" ? html`<${Empty}>Pick a tenant and an entity id to read its history from the log.<//>`
      : history === undefined ? (error === undefined ? html`<p>Reading the log…</p>` : null)
      : history.records.length === 0 ? html`<${Empty}>No record of this tenant mentions ${history.entityId}.<//>`
      : html`<p>${history.matched} records mention ${history.entityId}${history.matched > history.records.length ? ` (the last ${history.records.length} shown)` : ""}.</p>
        <ol class="history">${history.records.map((r) => html`<li><details>
          <summary><span class="offset">#${r.offset}</span> ${time(r.receivedAt)} <${Status} status=${r.source} /> <code>${r.type}</code> ${r.events.join(", ")}</summary>
          <p class="meta">record ${r.id}; the body exactly as stored:</p>
          <pre class="body">${r.body}</pre>
        </details></li>`)}</ol>`}
  `
}

// plugins --------------------------------------------------------------------------------

interface DeadLetter {
  readonly id: number
  readonly plugin: string
  readonly eventTag: string
  readonly appId: string
  readonly businessId: string | null
  readonly offset: number
  readonly error: string
  readonly attempts: number
}

export const Plugins = ({ live }: { live: Live }) => {
  const { data, error, reload } = useLoad<{ deadLetters: ReadonlyArray<DeadLetter> }>("/admin/plugins/dead-letters", live)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const plugins = live.state === "live" ? live.snapshot.plugins : []
  const redrive = (q: string) => {
    setMessage(undefined)
    api(`/admin/plugins/redrive?${q}`, "POST").then(
      (r: any) => setMessage(`Re-driven: ${(r.succeeded ?? []).length} handled, ${(r.failed ?? []).length} failed again.`),
      (e: Error) => setMessage(`Failed: ${e.message}`)
    ).finally(reload)
  }
  return html`
    <h1>Plugins</h1>
    ${plugins.length === 0 ? html`<${Empty}>No plugin is configured (see plugins in the configuration).<//>` : html`<${Table} label="Plugins"><thead><tr><th>plugin</th><th>status</th><th>handled</th><th>failures</th><th>lag (records)</th><th>dead letters</th></tr></thead><tbody>
      ${plugins.map((p) => html`<tr><td>${p.name} <small>${p.version}</small></td><td><${Status} status=${p.status} /></td><td>${p.handled}</td><td>${p.failures}</td><td>${p.lag ?? "–"}</td>
        <td>${p.deadLetters}${p.deadLetters > 0 ? html` <button type="button" onClick=${() => redrive(`plugin=${encodeURIComponent(p.name)}`)}>Redrive all</button>` : null}</td></tr>`)}
    </tbody><//>`}
    <h2>Dead letters</h2>
    <span role="status" class="message">${message ?? ""}</span>
    <${Failure} error=${error} />
    ${data === undefined ? null : data.deadLetters.length === 0 ? html`<${Empty}>No dead letters: every event was handled.<//>` : html`<${Table} label="Dead letters"><thead><tr><th>id</th><th>plugin</th><th>event</th><th>tenant</th><th>attempts</th><th>error</th><th></th></tr></thead><tbody>
      ${data.deadLetters.map((d) => html`<tr data-dead-letter=${d.id}><td>${d.id}</td><td>${d.plugin}</td><td><code>${d.eventTag}</code> #${d.offset}</td><td>${d.appId}:${d.businessId ?? ""}</td><td>${d.attempts}</td><td>${d.error}</td>
        <td><button type="button" onClick=${() => redrive(`id=${d.id}`)}>Redrive</button></td></tr>`)}
    </tbody><//>`}
  `
}

export type { Snapshot }
