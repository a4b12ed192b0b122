/**
 * The write path's pages (docs/architecture.md §4.31): one tenant's commands, filtered by state
 * and kind (`#/tenants/:appId/:businessId/commands?state=inDoubt`), and one command with its
 * attempts, the request its kind sends, every answer's exact body (indented, token for token)
 * and, when it is in doubt, what the engine saw and the decision a person takes: send it again,
 * or mark it done with the service's id, each behind a confirmation step. The tenant page shows
 * the counts by state (`CommandCounts`).
 *
 * A form asks for a new command (command-form.ts).
 *
 * Everything shown comes from the admin API and goes through Preact's text escaping; fields
 * whose names say they hold a secret (token, secret, password...) are shown as "(hidden)".
 */
import { html, useEffect, useState } from "./html.ts"
import { KINDS } from "./command-examples.ts"
import { ago, api, type Live, time } from "./api.ts"
import { pretty } from "./bodies.ts"
import { CommandForm } from "./command-form.ts"

export const STATES = ["pending", "sending", "inDoubt", "confirmed", "failed", "cancelled"] as const
const STATE_LABEL: Readonly<Record<string, string>> = {
  pending: "pending",
  sending: "sending",
  inDoubt: "in doubt",
  confirmed: "confirmed",
  failed: "failed",
  cancelled: "cancelled"
}

interface Reason {
  readonly tag: string
  readonly code?: string
  readonly message: string
}

export interface Command {
  readonly id: string
  readonly kind: string
  readonly state: string
  readonly payload: unknown
  readonly requestedBy: { readonly type: string; readonly name?: string }
  readonly idempotencyKey: string
  readonly marker?: string
  readonly attempts: number
  readonly entityId?: string
  readonly lastAnswer?: string
  readonly reason?: Reason
  readonly evidence?: string
  readonly confirmedBy?: string
  readonly seen?: string
  readonly requestedAt: number
  readonly updatedAt: number
}

interface Counts {
  readonly byState: Readonly<Record<string, number>>
  readonly flagged: number
}

interface ListAnswer {
  readonly items: ReadonlyArray<Command>
  readonly total: number
  readonly counts: Counts
}

type Transition = { readonly state: string; readonly offset: number; readonly at: number } & Record<string, any>

interface Ledger {
  readonly command: Command
  readonly request: { readonly operation: string; readonly body: unknown } | null
  readonly transitions: ReadonlyArray<Transition>
}

// loading ---------------------------------------------------------------------------------

/** Reads `path`, again whenever the live snapshot moves (once a second) or `reload` is called. */
const useLoad = <A>(path: string, live: Live) => {
  const [state, setState] = useState<{ path: string; data?: A; error?: string }>({ path })
  const [n, setN] = useState(0)
  const at = live.state === "live" ? live.snapshot.at : 0
  useEffect(() => {
    let current = true
    api<A>(path).then(
      (data) => current && setState({ path, data }),
      (e: Error) => current && setState((s) => ({ path, ...(s.path === path && s.data !== undefined ? { data: s.data } : {}), error: e.message }))
    )
    return () => void (current = false)
  }, [path, at, n])
  const shown = state.path === path ? state : { path }
  return { data: shown.data, error: shown.error, reload: () => setN((x) => x + 1) }
}

const Failure = ({ error }: { error: string | undefined }) => error === undefined ? null : html`<p class="failure" role="alert">${error}</p>`
export const StateBadge = ({ state }: { state: string }) => html`<span class=${`badge ${state}`} data-state=${state}>${STATE_LABEL[state] ?? state}</span>`
const Flagged = () => html`<span class="badge flagged" title="answered as applied, but the service does not show the effect">flagged</span>`
const who = (r: Command["requestedBy"]) => (r.name === undefined ? r.type : `${r.type} ${r.name}`)
const pagePath = (appId: string, businessId: string) => `#/tenants/${appId}/${businessId}/commands`
const listHref = (appId: string, businessId: string, q: Record<string, string | undefined>) => {
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== "") p.set(k, v)
  const s = p.toString()
  return `${pagePath(appId, businessId)}${s === "" ? "" : `?${s}`}`
}

const newestFirst = (items: ReadonlyArray<Command>) =>
  [...items].sort((a, b) => b.requestedAt - a.requestedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))

/** The counts by state as cards, each a link to the list of that state; the flagged ones too. */
const CountCards = ({ appId, businessId, counts }: { appId: string; businessId: string; counts: Counts }) => html`
  <section class="cards command-counts" aria-label="Commands by state" data-testid="command-counts">
    ${STATES.map((s) => html`<a class=${`card ${s === "inDoubt" && (counts.byState[s] ?? 0) > 0 ? "bad" : s === "failed" && (counts.byState[s] ?? 0) > 0 ? "warn" : ""}`}
      href=${listHref(appId, businessId, { state: s })} data-count=${s}><b>${counts.byState[s] ?? 0}</b> ${STATE_LABEL[s]}</a>`)}
    <a class=${`card ${counts.flagged > 0 ? "bad" : ""}`} href=${listHref(appId, businessId, { flagged: "true" })} data-count="flagged"><b>${counts.flagged}</b> flagged</a>
  </section>`

/** The tenant page's part: its commands counted by state, with a way to the list. */
export const CommandCounts = ({ live, appId, businessId }: { live: Live; appId: string; businessId: string }) => {
  const { data, error } = useLoad<ListAnswer>(`/admin/tenants/${appId}/${businessId}/commands?limit=1`, live)
  const total = data === undefined ? 0 : Object.values(data.counts.byState).reduce((n, v) => n + v, 0)
  return html`
    <h2>Commands</h2>
    <${Failure} error=${error} />
    ${data === undefined ? (error === undefined ? html`<p>Loading…</p>` : null)
      : total === 0 ? html`<p class="empty">No command has been asked for this tenant yet.</p>`
      : html`<${CountCards} appId=${appId} businessId=${businessId} counts=${data.counts} />`}
    <p><a href=${pagePath(appId, businessId)}>All commands of this tenant</a></p>`
}

// the list --------------------------------------------------------------------------------

/**
 * The list's filters: a draft the page's refreshes (once a second) leave alone, applied to the
 * address (and so to the list) by Show.
 */
const Filters = ({ appId, businessId, initial }: { appId: string; businessId: string; initial: { state: string; kind: string; flagged: boolean } }) => {
  const [draft, setDraft] = useState(initial)
  const submit = (e: Event) => {
    e.preventDefault()
    location.hash = listHref(appId, businessId, { state: draft.state, kind: draft.kind, flagged: draft.flagged ? "true" : undefined })
  }
  const pick = (name: "state" | "kind") => (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLSelectElement).value })
  return html`<form class="filters" role="search" aria-label="Filter commands" onSubmit=${submit}>
    <label>State <select name="state" value=${draft.state} onChange=${pick("state")}><option value="">any</option>${STATES.map((s) => html`<option value=${s}>${STATE_LABEL[s]}</option>`)}</select></label>
    <label>Kind <select name="kind" value=${draft.kind} onChange=${pick("kind")}><option value="">any</option>${KINDS.map((k) => html`<option value=${k}>${k}</option>`)}</select></label>
    <label class="check"><span><input type="checkbox" name="flagged" checked=${draft.flagged} onChange=${(e: Event) => setDraft({ ...draft, flagged: (e.target as HTMLInputElement).checked })} /> only flagged</span></label>
    <button type="submit">Show</button>
  </form>`
}

export const Commands = ({ live, appId, businessId, query }: { live: Live; appId: string; businessId: string; query: URLSearchParams }) => {
  const state = query.get("state") ?? ""
  const kind = query.get("kind") ?? ""
  const flagged = query.get("flagged") === "true"
  const q = new URLSearchParams({ limit: "100" })
  if (state !== "") q.set("state", state)
  if (kind !== "") q.set("kind", kind)
  if (flagged) q.set("flagged", "true")
  const { data, error } = useLoad<ListAnswer>(`/admin/tenants/${appId}/${businessId}/commands?${q.toString()}`, live)
  const filtered = state !== "" || kind !== "" || flagged
  const total = data === undefined ? 0 : Object.values(data.counts.byState).reduce((n, v) => n + v, 0)
  return html`
    <h1>Commands <small>${appId}:${businessId}</small></h1>
    <p><a href=${`#/tenants/${appId}/${businessId}`}>Back to the tenant</a></p>
    ${data === undefined ? null : html`<${CountCards} appId=${appId} businessId=${businessId} counts=${data.counts} />`}
    <${Filters} key=${location.hash} appId=${appId} businessId=${businessId} initial=${{ state, kind, flagged }} />
    <${CommandForm} appId=${appId} businessId=${businessId} />
    <${Failure} error=${error} />
    ${data === undefined ? (error === undefined ? html`<p>Loading…</p>` : null)
      : data.items.length === 0 ? html`<p class="empty">${filtered && total > 0 ? "No command matches these filters."
        : "No command has been asked for this tenant yet. Ask for one with the form above; an application asks with POST /admin/tenants/:appId/:businessId/commands (docs/admin-api.md), a plugin with ctx.commands."}</p>`
      : html`<div class="scroll" tabindex="0" role="region" aria-label="Commands"><table data-testid="commands-table">
          <thead><tr><th>command</th><th>kind</th><th>state</th><th>attempts</th><th>service id</th><th>asked by</th><th>asked</th><th>last change</th></tr></thead>
          <tbody>${newestFirst(data.items).map((c) => html`<tr data-command=${c.id} class=${c.state === "inDoubt" || c.seen === "flagged" ? "doubt" : ""}>
            <td><a href=${`${pagePath(appId, businessId)}/${encodeURIComponent(c.id)}`} title=${c.id}><code>${c.id.length > 13 ? `${c.id.slice(0, 8)}…` : c.id}</code></a></td>
            <td><code>${c.kind}</code></td>
            <td><${StateBadge} state=${c.state} />${c.seen === "flagged" ? html` <${Flagged} />` : null}</td>
            <td>${c.attempts}</td><td>${c.entityId ?? "–"}</td><td>${who(c.requestedBy)}</td>
            <td title=${time(c.requestedAt)}>${ago(c.requestedAt)}</td><td title=${time(c.updatedAt)}>${ago(c.updatedAt)}</td>
          </tr>`)}</tbody></table></div>
          <p class="pager">${data.items.length === data.total ? `${data.total} commands, newest first.` : `${data.items.length} of ${data.total} commands shown, newest first; narrow them with the filters.`}</p>`}
  `
}

// one command -----------------------------------------------------------------------------

/** A person's decision on an in-doubt command; each choice asks once more before it acts. */
const Decide = ({ path, command, done }: { path: string; command: Command; done: (message: string) => void }) => {
  const [step, setStep] = useState<"choose" | "retry" | "markDone">("choose")
  const [entityId, setEntityId] = useState("")
  const [note, setNote] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  const act = (action: "retry" | "mark-done", body?: unknown) => {
    setBusy(true)
    setError(undefined)
    api<Command>(`${path}/${action}`, "POST", body).then(
      (c) => done(action === "retry" ? `Sent again: the command is ${STATE_LABEL[c.state] ?? c.state}.` : `Marked done: the command is ${STATE_LABEL[c.state] ?? c.state}, by a person.`),
      (e: Error) => setError(e.message)
    ).finally(() => setBusy(false))
  }
  const value = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value)
  return html`<div class="decision" data-testid="decision">
    <h3>Your decision</h3>
    ${step === "choose" ? html`
      <p>Look for the effect on the service (its back office, or a list by ${command.marker === undefined ? "the key in the payload" : html`the marker <code>${command.marker}</code>`}), then:</p>
      <div class="actions">
        <button type="button" onClick=${() => setStep("markDone")}>Mark done…</button>
        <button type="button" class="secondary" onClick=${() => setStep("retry")}>Send again…</button>
      </div>`
    : step === "retry" ? html`
      <p role="alert" class="warning"><b>Send it again?</b> If attempt ${command.attempts} took effect on the service, sending again makes the effect twice.</p>
      <div class="actions">
        <button type="button" disabled=${busy} onClick=${() => act("retry")}>Yes, send again</button>
        <button type="button" class="secondary" disabled=${busy} onClick=${() => setStep("choose")}>Back</button>
      </div>`
    : html`<form onSubmit=${(e: Event) => (e.preventDefault(), act("mark-done", { ...(entityId.trim() === "" ? {} : { entityId: entityId.trim() }), ...(note.trim() === "" ? {} : { note: note.trim() }) }))}>
      <label>The service's id of the effect <input name="entityId" inputmode="numeric" autocomplete="off" placeholder="optional" value=${entityId} onInput=${value(setEntityId)} /></label>
      <label>Note <input name="note" autocomplete="off" placeholder="where you saw it (optional)" value=${note} onInput=${value(setNote)} /></label>
      <p role="alert" class="warning"><b>Mark it done?</b> The engine will not send it again; it becomes confirmed by a person${entityId.trim() === "" ? "" : `, with id ${entityId.trim()}`}.</p>
      <div class="actions">
        <button type="submit" disabled=${busy}>Yes, mark done</button>
        <button type="button" class="secondary" disabled=${busy} onClick=${() => setStep("choose")}>Back</button>
      </div></form>`}
    <${Failure} error=${error} />
  </div>`
}

const Pre = ({ body, testid }: { body: unknown; testid?: string }) => html`<pre class="body" data-testid=${testid}>${pretty(body)}</pre>`

const ReasonText = ({ reason }: { reason: Reason | undefined }) =>
  reason === undefined ? null : html`<code>${reason.tag}</code>${reason.code === undefined ? "" : html` <code>${reason.code}</code>`} ${reason.message}`

/** One transition of the ledger, in words, with what it holds. */
const Step = ({ t }: { t: Transition }) => {
  const head = html`<span class="offset">#${t.offset}</span> <span title=${time(t.at)}>${time(t.at)}</span> <span class=${`badge step ${t.state}`}>${t.state}</span>`
  switch (t.state) {
    case "requested":
      return html`<li>${head} by ${who(t["requestedBy"])}, key <code>${t["idempotencyKey"]}</code></li>`
    case "sent":
      return html`<li>${head} attempt ${t["attempt"]}</li>`
    case "answered":
      return html`<li data-testid="answer">${head} attempt ${t["attempt"]}: status ${t["status"]}${t["entityId"] === undefined ? "" : `, id ${t["entityId"]}`}${
        t["call"] === undefined || t["call"].items < 2 ? "" : `; one of ${t["call"].items} items of its call (position ${t["call"].position + 1}), its own entry shown`}
        <${Pre} body=${t["body"]} /></li>`
    case "inDoubt":
    case "failed":
      return html`<li>${head}${t["attempt"] === undefined ? "" : ` attempt ${t["attempt"]}`}: <${ReasonText} reason=${t["reason"]} />
        ${t["evidence"] === undefined ? null : html`<pre class="body evidence">${t["evidence"]}</pre>`}</li>`
    case "confirmed":
      return html`<li>${head} by ${t["by"]}${t["entityId"] === undefined ? "" : `, id ${t["entityId"]}`}${t["evidence"] === undefined ? null : html`<pre class="body evidence">${t["evidence"]}</pre>`}</li>`
    case "seen":
      return html`<li>${head} in the ${t["by"] === "copy" ? "copy" : "service (a targeted read)"}<pre class="body evidence">${t["evidence"]}</pre></li>`
    case "notSeen":
      return html`<li>${head} <${ReasonText} reason=${t["reason"]} /><pre class="body evidence">${t["evidence"]}</pre></li>`
    case "retried":
      return html`<li>${head} sent again after attempt ${t["afterAttempt"]}, decided by ${t["by"]}</li>`
    case "cancelled":
      return html`<li>${head} by ${t["by"]}</li>`
    default:
      return html`<li>${head}</li>`
  }
}

export const CommandDetail = ({ live, appId, businessId, id }: { live: Live; appId: string; businessId: string; id: string }) => {
  const path = `/admin/tenants/${appId}/${businessId}/commands/${encodeURIComponent(id)}`
  const { data, error, reload } = useLoad<Ledger>(`${path}/ledger`, live)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const back = html`<p><a href=${pagePath(appId, businessId)}>All commands of ${appId}:${businessId}</a></p>`
  if (data === undefined) return html`<h1>Command <code>${id}</code></h1>${back}<${Failure} error=${error} />${error === undefined ? html`<p>Loading…</p>` : null}`
  const c = data.command
  const doubt = data.transitions.findLast((t) => t.state === "inDoubt")
  const notSeen = data.transitions.find((t) => t.state === "notSeen")
  return html`
    <h1>Command <code>${c.id}</code> <${StateBadge} state=${c.state} />${c.seen === "flagged" ? html` <${Flagged} />` : null}</h1>
    ${back}
    <${Failure} error=${error} />
    <span role="status" class="message" data-testid="decision-message">${message ?? ""}</span>
    ${c.state === "inDoubt" ? html`<section class="attention doubt" aria-label="In doubt" data-testid="in-doubt">
      <p><b>In doubt:</b> the answer to attempt ${c.attempts} was lost, and the engine could not tell whether the service applied it. <${ReasonText} reason=${c.reason} /></p>
      <p>What the engine saw:</p>
      <pre class="body evidence" data-testid="evidence">${c.evidence ?? doubt?.["evidence"] ?? "nothing: no read could be made"}</pre>
      <${Decide} key=${c.updatedAt} path=${path} command=${c} done=${(m: string) => (setMessage(m), reload())} />
    </section>` : null}
    ${c.seen === "flagged" ? html`<div class="attention" role="alert"><p><b>Flagged:</b> the service answered it as applied, but neither the copy nor a targeted read shows the effect. <${ReasonText} reason=${notSeen?.["reason"]} /></p>
      ${notSeen === undefined ? null : html`<pre class="body evidence">${notSeen["evidence"]}</pre>`}</div>` : null}
    <dl class="facts" data-testid="command-facts">
      <dt>Kind</dt><dd><code>${c.kind}</code></dd>
      <dt>State</dt><dd data-testid="command-state">${STATE_LABEL[c.state] ?? c.state}</dd>
      <dt>Attempts</dt><dd data-testid="command-attempts">${c.attempts}</dd>
      <dt>Service id</dt><dd data-testid="command-entity">${c.entityId ?? "not known"}</dd>
      ${c.confirmedBy === undefined ? null : html`<dt>Confirmed by</dt><dd>${c.confirmedBy === "person" ? "a person" : c.confirmedBy === "readBack" ? "reading back" : "the service's answer"}</dd>`}
      ${c.state !== "confirmed" || c.seen === "flagged" ? null : html`<dt>Effect seen</dt><dd>${c.seen === undefined ? "not yet (looked for in the copy)" : c.seen === "copy" ? "in the copy" : "by a targeted read"}</dd>`}
      ${c.reason === undefined || c.state !== "failed" ? null : html`<dt>Reason</dt><dd><${ReasonText} reason=${c.reason} /></dd>`}
      <dt>Asked by</dt><dd>${who(c.requestedBy)}, ${time(c.requestedAt)}</dd>
      <dt>Idempotency key</dt><dd><code>${c.idempotencyKey}</code></dd>
      ${c.marker === undefined ? null : html`<dt>Marker</dt><dd><code>${c.marker}</code> (in the description, to find it again)</dd>`}
      <dt>Last change</dt><dd>${ago(c.updatedAt)}</dd>
    </dl>
    <h2>What was sent</h2>
    ${data.request === null ? html`<p class="empty">This server does not know the kind ${c.kind}: the payload as stored.</p><${Pre} body=${c.payload} />`
      : html`<p><code>POST ${data.request.operation}</code>${Array.isArray(data.request.body) ? " (a call of up to 100 items: queued commands of this kind share one)" : ""}</p>
        <${Pre} body=${data.request.body} testid="sent" />`}
    <h2>What happened</h2>
    ${data.transitions.length === 0 ? html`<p class="empty">The log holds no transition of this command.</p>`
      : html`<ol class="history steps" data-testid="transitions">${data.transitions.map((t) => html`<${Step} t=${t} />`)}</ol>`}
  `
}
