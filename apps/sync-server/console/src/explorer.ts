/**
 * The data explorer (docs/architecture.md §4.35): one tenant's read models, browsed as an
 * operator would ask ("is order 1234 in our copy, with which status?", "which products of
 * depot 2 are out of stock?"), over the admin read-model routes. The filters live in the URL
 * (`#/data?tenant=..&kind=orders&status=54`), so a view has an address and survives a reload.
 *
 * Pages are keyset by id (the primary key): the only order the read API pages by without a
 * sort. Every row opens its exact stored record and its history from the log.
 */
import { html, useEffect, useState } from "./html.ts"
import { api, type Live, time } from "./api.ts"

type Row = Record<string, any>

interface Kind {
  readonly label: string
  /** The list route under the tenant; undefined `paged`: the route answers every row at once. */
  readonly path: string
  readonly paged: boolean
  readonly filters: ReadonlyArray<Filter>
  readonly columns: ReadonlyArray<readonly [string, (r: Row) => unknown]>
  readonly tombstones: boolean
}

interface Filter {
  readonly name: string
  readonly label: string
  readonly type?: "date" | "search" | "select"
  readonly placeholder?: string
  readonly options?: ReadonlyArray<readonly [string, string]>
  /** How the URL's value goes to the API (dates become epoch-ms bounds). */
  readonly to?: (v: string) => ReadonlyArray<readonly [string, string]>
}

/** Order statuses (docs/api-catalogue.md, orders: `info.status`). */
const ORDER_STATUS: ReadonlyArray<readonly [string, string]> = [
  ["54", "new"], ["55", "confirming"], ["56", "confirmed"], ["57", "awaiting customer"], ["42", "packing"], ["40", "packed"],
  ["43", "awaiting pickup"], ["59", "in transit"], ["60", "success"], ["61", "failed"], ["58", "carrier cancelled"],
  ["63", "customer cancelled"], ["64", "system cancelled"], ["68", "out of stock"], ["71", "returning"], ["72", "returned"],
  ["73", "export depot changed"], ["74", "return confirmed"]
]
const statusName = (code: unknown) => ORDER_STATUS.find(([c]) => c === String(code))?.[1] ?? String(code ?? "")

/** A local calendar day as the epoch-ms bounds the orders route takes. */
const dayFrom = (name: string) => (v: string) => [[name, String(new Date(`${v}T00:00:00`).getTime())]] as const
const dayTo = (name: string) => (v: string) => [[name, String(new Date(`${v}T23:59:59.999`).getTime())]] as const

export const KINDS: Readonly<Record<string, Kind>> = {
  products: {
    label: "Products",
    path: "products",
    paged: true,
    tombstones: true,
    filters: [{ name: "search", label: "Name, code or barcode", type: "search", placeholder: "contains" }],
    columns: [["id", (r) => r.id], ["code", (r) => r.code], ["barcode", (r) => r.barcode], ["name", (r) => r.name], ["price", (r) => r.priceText ?? r.price]]
  },
  orders: {
    label: "Orders",
    path: "orders",
    paged: true,
    tombstones: true,
    filters: [
      { name: "status", label: "Status", type: "select", options: ORDER_STATUS },
      { name: "saleChannel", label: "Channel", placeholder: "code, e.g. 42" },
      { name: "depotId", label: "Depot", placeholder: "depot id" },
      { name: "createdFrom", label: "Created from", type: "date", to: dayFrom("createdFromMs") },
      { name: "createdTo", label: "Created to", type: "date", to: dayTo("createdToMs") }
    ],
    columns: [
      ["id", (r) => r.id], ["status", (r) => statusName(r.status)], ["channel", (r) => r.saleChannel], ["depot", (r) => r.depotId],
      ["customer", (r) => [r.customerName, r.customerMobile].filter(Boolean).join(", ")], ["total", (r) => r.totalText ?? r.total],
      ["lines", (r) => r.lineCount], ["created", (r) => (r.createdAtMs == null ? "" : time(r.createdAtMs))]
    ]
  },
  bills: {
    label: "Bills",
    path: "bills",
    paged: true,
    tombstones: true,
    filters: [
      { name: "type", label: "Type", type: "select", options: [["1", "import"], ["2", "export"]] },
      { name: "depotId", label: "Depot", placeholder: "depot id" },
      { name: "fromDate", label: "From", type: "date" },
      { name: "toDate", label: "To", type: "date" }
    ],
    columns: [["id", (r) => r.id], ["date", (r) => r.date], ["type", (r) => (r.type === "1" ? "import" : r.type === "2" ? "export" : r.type)], ["depot", (r) => r.depotId], ["customer", (r) => r.customerName], ["amount", (r) => r.amountText ?? r.amount]]
  },
  customers: {
    label: "Customers",
    path: "customers",
    paged: true,
    tombstones: true,
    filters: [{ name: "mobile", label: "Mobile", type: "search", placeholder: "exact mobile" }, { name: "search", label: "Name", type: "search", placeholder: "contains" }],
    columns: [["id", (r) => r.id], ["name", (r) => r.name], ["mobile", (r) => r.mobile], ["email", (r) => r.email], ["points", (r) => r.points]]
  },
  depots: { label: "Depots", path: "depots", paged: false, tombstones: false, filters: [], columns: [["id", (r) => r.id], ["code", (r) => r.code], ["name", (r) => r.name], ["address", (r) => r.address]] },
  categories: { label: "Categories", path: "categories", paged: false, tombstones: false, filters: [], columns: [["id", (r) => r.id], ["name", (r) => r.name ?? r.record?.name], ["parent", (r) => r.parentId ?? r.record?.parentId ?? ""]] }
}

const href = (q: Record<string, string | undefined>) => {
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== "") p.set(k, v)
  return `#/data?${p.toString()}`
}

/** The API query of a view: its filters (dates turned into bounds), tombstones, the cursor. */
const apiQuery = (kind: Kind, query: URLSearchParams) => {
  const p = new URLSearchParams()
  for (const f of kind.filters) {
    const v = query.get(f.name)
    if (v === null || v === "") continue
    for (const [k, x] of f.to === undefined ? [[f.name, v] as const] : f.to(v)) p.set(k, x)
  }
  if (kind.tombstones && query.get("deleted") === "true") p.set("includeDeleted", "true")
  if (kind.paged) {
    p.set("limit", "50")
    const after = query.get("after")
    if (after !== null) p.set("after", after)
  }
  return p.toString()
}

const useGet = <A>(path: string | undefined) => {
  const [state, setState] = useState<{ path?: string; data?: A; error?: string }>({})
  useEffect(() => {
    if (path === undefined) return
    let current = true
    setState({ path })
    api<A>(path).then((data) => current && setState({ path, data }), (e: Error) => current && setState({ path, error: e.message }))
    return () => void (current = false)
  }, [path])
  return state.path === path ? state : {}
}

const Json = ({ value }: { value: unknown }) => html`<pre class="body">${JSON.stringify(value, null, 2)}</pre>`

/** One record: what the read model holds, the order's lines, the product's stock, and its history. */
const RecordView = ({ base, kind, id }: { base: string; kind: string; id: string }) => {
  const one = useGet<Row>(`${base}/${kind}/${encodeURIComponent(id)}`)
  const stock = useGet<{ items: ReadonlyArray<Row> }>(kind === "products" ? `${base}/inventory?productId=${encodeURIComponent(id)}` : undefined)
  const history = useGet<{ matched: number; records: ReadonlyArray<Row> }>(`${base}/history/${encodeURIComponent(id)}`)
  const r = one.data
  const record = r?.record ?? {}
  return html`
    ${one.error === undefined ? null : html`<p class="failure" role="alert">${one.error}</p>`}
    ${r === undefined ? (one.error === undefined ? html`<p>Loading…</p>` : null) : html`
      <dl class="facts" data-testid="record-facts">
        <dt>id</dt><dd>${r.id}</dd>
        ${r.deleted === true ? html`<dt>state</dt><dd><span class="badge attention">deleted</span> (a tombstone: the source deleted it)</dd>` : null}
        ${kind === "orders" ? html`<dt>status</dt><dd data-testid="record-status">${statusName(r.status)} (${r.status})</dd>
          <dt>customer</dt><dd>${[r.customerName, r.customerMobile, r.customerId === null ? "" : `id ${r.customerId}`].filter(Boolean).join(", ") || "–"}</dd>
          <dt>carrier</dt><dd>${record.carrier == null ? "–" : [record.carrier.name, record.carrier.id === undefined ? "" : `id ${record.carrier.id}`, record.carrier.carrierCode ?? record.carrier.code].filter(Boolean).join(", ")}</dd>` : null}
      </dl>
      ${Array.isArray(r.items) ? html`<h3>Lines</h3>${r.items.length === 0 ? html`<p class="empty">No lines.</p>` : html`<div class="scroll" tabindex="0" role="region" aria-label="Lines"><table data-testid="lines"><thead><tr><th>product</th><th>quantity</th><th>price</th><th>record</th></tr></thead><tbody>
        ${r.items.map((i: Row) => html`<tr><td>${i.productId ?? i.record?.productId ?? ""}</td><td>${i.quantity ?? i.record?.quantity ?? ""}</td><td>${i.priceText ?? i.price ?? i.record?.price ?? ""}</td><td><code>${JSON.stringify(i.record).slice(0, 80)}</code></td></tr>`)}
      </tbody></table></div>`}` : null}
      ${kind === "products" ? html`<h3>Stock per depot</h3>${stock.data === undefined ? html`<p>Loading…</p>` : stock.data.items.length === 0 ? html`<p class="empty">No stock level stored.</p>` : html`<div class="scroll" tabindex="0" role="region" aria-label="Stock"><table><thead><tr><th>depot</th><th>remain</th><th>available</th></tr></thead><tbody>
        ${stock.data.items.map((s) => html`<tr><td>${s.depotId === "" ? "all depots" : s.depotId}</td><td>${s.remainText ?? s.remain}</td><td>${s.availableText ?? s.available}</td></tr>`)}
      </tbody></table></div>`}` : null}
      <h3>Stored record</h3>
      <${Json} value=${record} />`}
    <h3>History from the log</h3>
    ${history.error !== undefined ? html`<p class="failure" role="alert">${history.error}</p>`
      : history.data === undefined ? html`<p>Reading the log…</p>`
      : history.data.records.length === 0 ? html`<p class="empty">No record of the log mentions ${id}.</p>`
      : html`<ol class="history" data-testid="record-history">${history.data.records.map((h) => html`<li><details>
          <summary><span class="offset">#${h.offset}</span> ${time(h.receivedAt)} <span class=${`badge ${h.source}`}>${h.source}</span> <code>${h.type}</code> ${h.events.join(", ")}</summary>
          <pre class="body">${h.body}</pre></details></li>`)}</ol>`}
  `
}

export const Explorer = ({ live, query }: { live: Live; query: URLSearchParams }) => {
  const tenants = live.state === "live" ? live.snapshot.tenants.list : []
  const tenant = query.get("tenant") ?? (tenants[0] === undefined ? "" : `${tenants[0].appId}:${tenants[0].businessId}`)
  const kindName = KINDS[query.get("kind") ?? ""] === undefined ? "products" : query.get("kind")!
  const kind = KINDS[kindName]!
  const id = query.get("id") ?? undefined
  const [appId, businessId] = tenant.split(":")
  const base = `/admin/tenants/${appId}/${businessId}`
  const current = (extra: Record<string, string | undefined>) => {
    const q: Record<string, string | undefined> = { tenant, kind: kindName }
    for (const f of kind.filters) q[f.name] = query.get(f.name) ?? undefined
    if (query.get("deleted") === "true") q["deleted"] = "true"
    return href({ ...q, ...extra })
  }
  const list = useGet<{ items: ReadonlyArray<Row>; next?: string | null }>(tenant === "" || id !== undefined ? undefined : `${base}/${kind.path}?${apiQuery(kind, query)}`)
  const submit = (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.target as HTMLFormElement)
    const q: Record<string, string | undefined> = { tenant, kind: kindName }
    for (const f of kind.filters) q[f.name] = String(form.get(f.name) ?? "").trim()
    if (form.get("deleted") === "on") q["deleted"] = "true"
    location.hash = href(q)
  }
  const back = query.get("back")
  // The filters' form is uncontrolled (defaultValue, defaultChecked, selected): keyed by the
  // address, it starts from it and keeps what the operator types or ticks. A `value` or
  // `checked` prop would be put back on every render, and the live snapshot re-renders the page
  // once a second: a box ticked just before "Show" could be unticked by the time it was pressed.
  return html`
    <h1>Data${tenant === "" ? "" : html` <small>${tenant}</small>`}</h1>
    <nav class="tabs" aria-label="Data">
      ${Object.entries(KINDS).map(([k, v]) => html`<a href=${href({ tenant, kind: k })} aria-current=${k === kindName && id === undefined ? "page" : undefined}>${v.label}</a>`)}
    </nav>
    ${tenant === "" ? html`<p class="empty">No tenant yet: register one, then browse its data here.</p>`
      : id !== undefined ? html`
        <h2>${kind.label.replace(/s$/, "")} ${id}</h2>
        <p><a href=${back ?? current({})}>Back to the list</a></p>
        <${RecordView} key=${`${kindName}/${id}`} base=${base} kind=${kind.path} id=${id} />`
      : html`
        <form class="filters" role="search" aria-label=${`Filter ${kind.label.toLowerCase()}`} onSubmit=${submit} key=${location.hash}>
          ${kind.filters.map((f) => f.type === "select"
            ? html`<label>${f.label} <select name=${f.name}><option value="" selected=${(query.get(f.name) ?? "") === ""}>any</option>${f.options!.map(([v, l]) => html`<option value=${v} selected=${query.get(f.name) === v}>${l} (${v})</option>`)}</select></label>`
            : html`<label>${f.label} <input name=${f.name} type=${f.type ?? "text"} placeholder=${f.placeholder ?? ""} defaultValue=${query.get(f.name) ?? ""} /></label>`)}
          ${kind.tombstones ? html`<label class="check"><span><input type="checkbox" name="deleted" defaultChecked=${query.get("deleted") === "true"} /> with deleted (tombstones)</span></label>` : null}
          <button type="submit">Show</button>
        </form>
        ${list.error === undefined ? null : html`<p class="failure" role="alert">${list.error}</p>`}
        ${list.data === undefined ? (list.error === undefined ? html`<p>Loading…</p>` : null)
          : list.data.items.length === 0 ? html`<p class="empty">${query.get("after") === null ? `No ${kind.label.toLowerCase()} match.` : "No more rows."}</p>`
          : html`<div class="scroll" tabindex="0" role="region" aria-label=${kind.label}><table data-testid="data-table"><thead><tr>${kind.columns.map(([c]) => html`<th>${c}</th>`)}<th></th></tr></thead><tbody>
              ${list.data.items.map((r) => html`<tr data-id=${r.id} class=${r.deleted === true ? "deleted" : ""}>${kind.columns.map(([, f], i) => html`<td>${i === 0
                ? html`<a href=${current({ id: String(r.id), back: location.hash })}>${f(r)}</a>`
                : f(r)}</td>`)}<td>${r.deleted === true ? html`<span class="badge attention">deleted</span>` : ""}</td></tr>`)}
            </tbody></table></div>
            <p class="pager">${list.data.items.length} rows${query.get("after") === null ? "" : html` after id ${query.get("after")}`}.
              ${query.get("after") === null ? null : html` <a href=${current({})}>First page</a>`}
              ${kind.paged && list.data.next != null ? html` <a href=${current({ after: String(list.data.next) })} rel="next">Next page</a>` : null}</p>`}`}
  `
}
