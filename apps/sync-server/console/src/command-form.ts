/**
 * Asking for a command from the console (docs/architecture.md §4.31, §4.16): a kind, its payload
 * as JSON (started from a valid example of the kind, command-examples.ts) and an idempotency key
 * (made here, editable), sent as the admin route `POST /admin/tenants/:appId/:businessId/commands`
 * with the `Idempotency-Key` header. What the server refuses is said next to the form in words:
 * each field at fault by its path (400/422), the grant's missing permission or depot (403), a key
 * already used for another payload with a link to its command (409). An accepted command opens.
 */
import { html, useState } from "./html.ts"
import { api, ApiError } from "./api.ts"
import { example, type Kind, KINDS } from "./command-examples.ts"

/** A few random hex digits (any context: `crypto.randomUUID` needs a secure one). */
const fresh = (): string => Array.from(crypto.getRandomValues(new Uint8Array(5)), (b) => b.toString(16).padStart(2, "0")).join("")
const newKey = () => `console-${fresh()}`
const exampleText = (kind: Kind) => JSON.stringify(example(kind, fresh().toUpperCase()), null, 2)

interface Refusal {
  readonly status: number
  readonly message: string
  readonly issues?: ReadonlyArray<{ readonly path: string; readonly message: string }>
  readonly commandId?: string
  readonly permission?: string
  readonly depotId?: string
}

/** A Schema's message, said in words where it is terse. */
const words = (message: string): string => (message === "Missing key" ? "missing: the kind needs this field" : message)

const Refused = ({ refusal, commandHref }: { refusal: Refusal; commandHref: (id: string) => string }) => {
  const { status, message, issues } = refusal
  if ((status === 400 || status === 422) && issues !== undefined && issues.length > 0) {
    return html`<div class="failure" role="alert" data-testid="command-form-refusal" data-status=${status}>
      <p><b>Refused, nothing was stored:</b> ${issues.length === 1 ? "one field needs fixing" : `${issues.length} fields need fixing`}.</p>
      <ul class="issues">${issues.map((i) => html`<li data-path=${i.path}><code>${i.path}</code>: ${words(i.message)}</li>`)}</ul>
    </div>`
  }
  if (status === 403) {
    return html`<div class="failure" role="alert" data-testid="command-form-refusal" data-status="403">
      <p><b>Refused, nothing was stored:</b> this business's grant does not allow it${
      refusal.permission === undefined ? "" : html` (it lacks the permission <code>${refusal.permission}</code>)`}${
      refusal.depotId === undefined ? "" : html` (depot <code>${refusal.depotId}</code> is not granted)`}. ${message}</p>
    </div>`
  }
  if (status === 409) {
    return html`<div class="failure" role="alert" data-testid="command-form-refusal" data-status="409">
      <p><b>This idempotency key is taken:</b> it already names a command with another payload${
      refusal.commandId === undefined ? "" : html` (<a href=${commandHref(refusal.commandId)}>open that command</a>)`}. Make a new key to ask for this one.</p>
    </div>`
  }
  return html`<p class="failure" role="alert" data-testid="command-form-refusal" data-status=${status}>${message}</p>`
}

export const CommandForm = ({ appId, businessId }: { appId: string; businessId: string }) => {
  const [kind, setKind] = useState<Kind>("product.add")
  const [payload, setPayload] = useState(() => exampleText("product.add"))
  const [key, setKey] = useState(newKey)
  const [busy, setBusy] = useState(false)
  const [refusal, setRefusal] = useState<Refusal | undefined>(undefined)
  const base = `/admin/tenants/${appId}/${businessId}/commands`
  const commandHref = (id: string) => `#/tenants/${appId}/${businessId}/commands/${encodeURIComponent(id)}`
  const pick = (e: Event) => {
    const k = (e.target as HTMLSelectElement).value as Kind
    setKind(k)
    setPayload(exampleText(k))
    setRefusal(undefined)
  }
  const submit = (e: Event) => {
    e.preventDefault()
    let parsed: unknown
    try {
      parsed = JSON.parse(payload)
    } catch (error) {
      setRefusal({ status: 0, message: `The payload is not JSON: ${(error as Error).message}. Nothing was sent.` })
      return
    }
    if (key.trim() === "") {
      setRefusal({ status: 0, message: "An idempotency key is needed: it makes asking twice the same command. Nothing was sent." })
      return
    }
    setBusy(true)
    setRefusal(undefined)
    api<{ id: string }>(base, "POST", { kind, payload: parsed }, { "idempotency-key": key.trim() }).then(
      (c) => {
        setKey(newKey())
        location.hash = commandHref(c.id)
      },
      (error: Error) => {
        const body = error instanceof ApiError ? error.body : null
        setRefusal({
          status: error instanceof ApiError ? error.status : 0,
          message: error.message,
          ...(Array.isArray(body?.issues) ? { issues: body.issues } : {}),
          ...(typeof body?.commandId === "string" ? { commandId: body.commandId } : {}),
          ...(body?.permission === undefined ? {} : { permission: String(body.permission) }),
          ...(body?.depotId === undefined ? {} : { depotId: String(body.depotId) })
        })
      }
    ).finally(() => setBusy(false))
  }
  const value = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement | HTMLTextAreaElement).value)
  return html`<details class="ask" data-testid="command-form">
    <summary>Ask for a command…</summary>
    <form onSubmit=${submit} aria-label="Ask for a command">
      <label>Kind <select name="commandKind" value=${kind} onChange=${pick}>${KINDS.map((k) => html`<option value=${k}>${k}</option>`)}</select></label>
      <label>Payload (JSON, one ${kind.split(".")[0]}) <textarea name="payload" rows="12" spellcheck="false" autocomplete="off" value=${payload} onInput=${value(setPayload)}></textarea></label>
      <label>Idempotency key <input name="idempotencyKey" autocomplete="off" maxlength="200" value=${key} onInput=${value(setKey)} /></label>
      <p class="hint">The same key with the same payload answers the same command: asking twice never acts twice. The payload is checked before anything is stored.</p>
      <div class="actions"><button type="submit" disabled=${busy}>Send the command</button>
        <button type="button" class="secondary" disabled=${busy} onClick=${() => (setPayload(exampleText(kind)), setKey(newKey()), setRefusal(undefined))}>Start again from the example</button></div>
      ${refusal === undefined ? null : html`<${Refused} refusal=${refusal} commandHref=${commandHref} />`}
    </form>
  </details>`
}
