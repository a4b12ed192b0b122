/**
 * Charts of the server's series (`/admin/series`, docs/architecture.md §4.35), drawn as SVG by
 * hand: a chart here is a few polylines over at most 1,440 buckets, which takes ~60 lines; a
 * chart library would add 40-200 KB to a bundle of ~30 KB for axes we do not need. The SVG
 * scales to its box (`viewBox`), so it fits a phone; each chart has a text legend with the
 * totals (counts) or the latest and highest value (levels), which is what a screen reader and
 * the tests read.
 */
import { html, useEffect, useState } from "./html.ts"
import { api } from "./api.ts"

export interface SeriesAnswer {
  readonly stepMs: number
  readonly start: number
  readonly series: Readonly<Record<string, ReadonlyArray<number | null>>>
}

export interface Line {
  readonly name: string
  readonly label: string
  /** count: per-bucket increases (legend: total); level: a gauge (legend: latest and highest). */
  readonly kind: "count" | "level"
}

/** The lines' colours; the legend's swatches have the same as classes (the page's CSP allows no inline style). */
const COLOURS = ["#0b5cad", "#9a6700", "#b42318", "#1a7f37", "#6e40c9", "#57606a"]
const W = 600
const H = 120

const clock = (ms: number) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
const figure = (n: number) => (n >= 100 || Number.isInteger(n) ? String(Math.round(n)) : n.toFixed(2))

/** The points of one series: gaps (null) break the line. */
const paths = (values: ReadonlyArray<number | null>, max: number) => {
  const out: Array<string> = []
  let current: Array<string> = []
  const dx = values.length > 1 ? W / (values.length - 1) : W
  values.forEach((v, i) => {
    if (v === null) {
      if (current.length > 0) out.push(current.join(" "))
      current = []
      return
    }
    current.push(`${(i * dx).toFixed(1)},${(H - (v / max) * (H - 4) - 2).toFixed(1)}`)
  })
  if (current.length > 0) out.push(current.join(" "))
  // A lone point draws as a flat segment a bucket wide (at least 1 % of the width), so that it shows.
  const span = Math.max(dx, W / 100)
  return out.map((p) => {
    if (p.includes(" ")) return p
    const [x, y] = p.split(",").map(Number) as [number, number]
    const from = Math.max(0, x - span)
    return `${from.toFixed(1)},${y} ${Math.max(x, from + span).toFixed(1)},${y}`
  })
}

/** One chart: `lines` of `data`, with a legend. `testid` names it for the tests. */
export const Chart = ({ title, data, lines, testid }: { title: string; data: SeriesAnswer; lines: ReadonlyArray<Line>; testid: string }) => {
  const shown = lines.filter((l) => data.series[l.name] !== undefined)
  const max = Math.max(1, ...shown.flatMap((l) => data.series[l.name]!.map((v) => v ?? 0)))
  const end = data.start + data.stepMs * ((shown[0] === undefined ? 0 : data.series[shown[0].name]!.length) || 1)
  const step = data.stepMs >= 60_000 ? `${data.stepMs / 60_000} min` : `${data.stepMs / 1000} s`
  return html`<figure class="chart" data-testid=${testid}>
    <figcaption>${title} <small>(per ${step})</small></figcaption>
    ${shown.length === 0 ? html`<p class="empty">No data yet: the server samples every 5 s.</p>` : html`
      <svg viewBox=${`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label=${`${title}, ${clock(data.start)} to ${clock(end)}`}>
        <line x1="0" y1=${H - 1} x2=${W} y2=${H - 1} class="axis" />
        ${shown.map((l, i) => paths(data.series[l.name]!, max).map((p) => html`<polyline points=${p} fill="none" stroke=${COLOURS[i % COLOURS.length]} stroke-width="2" vector-effect="non-scaling-stroke" />`))}
      </svg>
      <div class="scale"><span>${clock(data.start)}</span><span>max ${figure(max)}</span><span>${clock(end)}</span></div>`}
    <ul class="legend">${shown.map((l, i) => {
      const values = data.series[l.name]!.filter((v): v is number => v !== null)
      const total = values.reduce((n, v) => n + v, 0)
      const latest = values.at(-1) ?? 0
      return html`<li><span class=${`swatch c${i % COLOURS.length}`}></span>${l.label}: ${
        l.kind === "count"
          ? html`<b data-testid=${`${testid}-${l.name}`} data-total=${total}>${figure(total)}</b>`
          : html`<b data-testid=${`${testid}-${l.name}`} data-latest=${latest}>${figure(latest)}</b> now, highest ${figure(Math.max(0, ...values))}`
      }</li>`
    })}</ul>
  </figure>`
}

/** Reads `path?range=` every 10 s (the series move every 5 s); the range is chosen by buttons. */
export const useSeries = (path: string) => {
  const [range, setRange] = useState<"hour" | "day">("hour")
  const [data, setData] = useState<SeriesAnswer | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  useEffect(() => {
    let current = true
    const load = () =>
      api<SeriesAnswer>(`${path}${path.includes("?") ? "&" : "?"}range=${range}`).then(
        (d) => current && (setData(d), setError(undefined)),
        (e: Error) => current && setError(e.message)
      )
    void load()
    const t = setInterval(load, 10_000)
    return () => (current = false, clearInterval(t))
  }, [path, range])
  return { range, setRange, data, error }
}

export const RangeSwitch = ({ range, setRange }: { range: string; setRange: (r: "hour" | "day") => void }) =>
  html`<div class="range" role="group" aria-label="Range">${(["hour", "day"] as const).map((r) =>
    html`<button type="button" class=${range === r ? "on" : ""} aria-pressed=${range === r} onClick=${() => setRange(r)}>last ${r}</button>`
  )}</div>`

/** The charts of a whole page: the range switch, then one chart per group. */
export const Charts = ({ path, groups, testid, extra }: {
  path: string
  testid: string
  groups: ReadonlyArray<{ readonly title: string; readonly id: string; readonly lines: (data: SeriesAnswer) => ReadonlyArray<Line> }>
  /** What else the page draws from the same answer. */
  extra?: (data: any) => unknown
}) => {
  const { range, setRange, data, error } = useSeries(path)
  return html`<section class="charts" aria-label="Charts" data-testid=${testid}>
    <${RangeSwitch} range=${range} setRange=${setRange} />
    ${error === undefined ? null : html`<p class="failure" role="alert">Charts: ${error}</p>`}
    ${data === undefined ? (error === undefined ? html`<p>Loading charts…</p>` : null)
      : html`<div class="chart-grid">${groups.map((g) => html`<${Chart} title=${g.title} testid=${g.id} data=${data} lines=${g.lines(data)} />`)}</div>${extra?.(data)}`}
  </section>`
}

/** The overview's charts: the server as a whole. */
export const OverviewCharts = () => html`<${Charts} path="/admin/series" testid="overview-charts" groups=${[
  { title: "Webhooks", id: "chart-webhooks", lines: () => [{ name: "accepted", label: "accepted", kind: "count" }, { name: "duplicates", label: "duplicates", kind: "count" }, { name: "refused", label: "refused", kind: "count" }] },
  { title: "Pages pulled", id: "chart-pages", lines: () => [{ name: "pages", label: "pages", kind: "count" }] },
  { title: "Calls and ERR_429 locks", id: "chart-calls", lines: () => [{ name: "calls", label: "calls", kind: "count" }, { name: "locks", label: "locks (ERR_429)", kind: "count" }] },
  {
    title: "Lag (records)",
    id: "chart-lag",
    lines: (d: SeriesAnswer) => [
      { name: "projectionLag", label: "projection", kind: "level" },
      ...Object.keys(d.series).filter((n) => n.startsWith("pluginLag:")).map((n) => ({ name: n, label: `plugin ${n.slice(10)}`, kind: "level" as const }))
    ]
  }
]} />`

interface ResourceTimes {
  readonly resource: string
  readonly passes: ReadonlyArray<{ readonly at: number; readonly pages: number; readonly records: number }>
  readonly lastFullMs: number | null
  readonly nextDueAt: number | null
}

const duration = (ms: number) => (ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`)
const until = (at: number, now: number) => (at <= now ? "due now" : `in ${duration(at - now)}`)

/** Per resource: pages per pass as bars (a call per page), the last full pass's duration, the next due time. */
const SyncOverTime = ({ resources, at }: { resources: ReadonlyArray<ResourceTimes>; at: number }) => html`
  <h3>Sync over time</h3>
  ${resources.length === 0 ? html`<p class="empty">No sync has run yet.</p>` : html`<div class="scroll" tabindex="0" role="region" aria-label="Sync over time"><table data-testid="sync-over-time">
    <thead><tr><th>resource</th><th>pages (calls) per pass, since the server started</th><th>last full pass took</th><th>next pass</th></tr></thead><tbody>
    ${resources.map((r) => {
      const max = Math.max(1, ...r.passes.map((p) => p.pages))
      const w = 100 / Math.max(r.passes.length, 10)
      return html`<tr data-resource=${r.resource}><td>${r.resource}</td>
        <td>${r.passes.length === 0 ? "no pass seen yet" : html`<svg class="bars" viewBox="0 0 100 30" preserveAspectRatio="none" role="img" aria-label=${`${r.passes.length} passes, ${r.passes.map((p) => p.pages).join(", ")} pages`}>
          ${r.passes.map((p, i) => html`<rect x=${i * w + w * 0.1} y=${30 - (p.pages / max) * 28 - 1} width=${w * 0.8} height=${(p.pages / max) * 28 + 1}><title>${new Date(p.at).toLocaleTimeString()}: ${p.pages} pages, ${p.records} records</title></rect>`)}
        </svg> <small data-passes=${r.passes.length}>${r.passes.length} passes, last ${r.passes.at(-1)!.pages} pages</small>`}</td>
        <td>${r.lastFullMs === null ? "–" : duration(r.lastFullMs)}</td>
        <td>${r.nextDueAt === null ? "paused" : until(r.nextDueAt, at)}</td></tr>`
    })}
  </tbody></table></div>`}`

/** A tenant's charts. */
export const TenantCharts = ({ appId, businessId }: { appId: string; businessId: string }) => html`<${Charts} path=${`/admin/tenants/${appId}/${businessId}/series`} testid="tenant-charts" groups=${[
  { title: "Pages and records pulled", id: "chart-tenant-pages", lines: () => [{ name: "pages", label: "pages", kind: "count" }, { name: "records", label: "records", kind: "count" }] },
  { title: "Calls and ERR_429 locks", id: "chart-tenant-calls", lines: () => [{ name: "calls", label: "calls", kind: "count" }, { name: "locks", label: "locks (ERR_429)", kind: "count" }] }
]} extra=${(d: { resources?: ReadonlyArray<ResourceTimes>; at: number }) => html`<${SyncOverTime} resources=${d.resources ?? []} at=${d.at} />`} />`

/** A small line of one key's budget use (0..1) over the last hour, for the rate-limits table. */
export const Spark = ({ values, label }: { values: ReadonlyArray<number | null>; label: string }) => {
  const peak = Math.max(0, ...values.map((v) => v ?? 0))
  return html`<svg class="spark" viewBox=${`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label=${`${label}: highest ${Math.round(peak * 100)} % in the last hour`}>
    ${paths(values, 1).map((p) => html`<polyline points=${p} fill="none" stroke=${peak >= 1 ? "#b42318" : "#0b5cad"} stroke-width="2" vector-effect="non-scaling-stroke" />`)}
  </svg>`
}

/** Budget use per key over the last hour, by key. */
export const useBudgetSeries = () => {
  const [keys, setKeys] = useState<ReadonlyMap<string, ReadonlyArray<number | null>>>(new Map())
  useEffect(() => {
    let current = true
    const load = () =>
      api<{ keys: ReadonlyArray<{ key: string; used: ReadonlyArray<number | null> }> }>("/admin/budgets/series").then(
        (d) => current && setKeys(new Map(d.keys.map((k) => [k.key, k.used]))),
        () => {}
      )
    void load()
    const t = setInterval(load, 10_000)
    return () => (current = false, clearInterval(t))
  }, [])
  return keys
}
