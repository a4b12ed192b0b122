/**
 * The operator console (docs/architecture.md §4.16): sign-in, then the pages, routed by the
 * URL's hash (`#/tenants/...`) so that every page has an address and the server serves one
 * document. Built with Preact and htm into `console/assets/app.js` (console/build.ts).
 */
import { html, render, useEffect, useState } from "./html.ts"
import { api, follow, type Live, setSession } from "./api.ts"
import { Connect } from "./connect.ts"
import { Events, Limits, Overview, Plugins, TenantDetail, Tenants } from "./pages.ts"
import { Explorer } from "./explorer.ts"
import { CommandDetail, Commands } from "./commands.ts"
import { PageService } from "./pages-service.ts"

const NAV = [
  ["#/", "Overview"],
  ["#/tenants", "Tenants"],
  ["#/limits", "Rate limits"],
  ["#/data", "Data"],
  ["#/page-service", "Page service"],
  ["#/events", "Events"],
  ["#/plugins", "Plugins"],
  ["#/connect", "Connect"]
] as const

const useHash = () => {
  const [hash, setHash] = useState(location.hash || "#/")
  useEffect(() => {
    const on = () => setHash(location.hash || "#/")
    addEventListener("hashchange", on)
    return () => removeEventListener("hashchange", on)
  }, [])
  return hash
}

const SignIn = ({ done }: { done: (csrf: string) => void }) => {
  const [key, setKey] = useState("")
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const submit = (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setError(undefined)
    api<{ csrf: string }>("/ui/session", "POST", { key }).then((r) => done(r.csrf), (e: Error) => setError(e.message)).finally(() => setBusy(false))
  }
  return html`<main class="signin">
    <h1>ocs console</h1>
    <form onSubmit=${submit}>
      <label for="key">Admin key</label>
      <input id="key" name="key" type="password" autocomplete="current-password" required autofocus value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)} />
      <button type="submit" disabled=${busy}>Sign in</button>
      ${error === undefined ? null : html`<p class="failure" role="alert">${error}</p>`}
      <p class="hint">The key is the server's <code>server.adminKey</code>; <code>./ocs start</code> prints it.</p>
    </form>
  </main>`
}

const Page = ({ hash, live }: { hash: string; live: Live }) => {
  const [path = "/", q = ""] = hash.slice(1).split("?")
  const query = new URLSearchParams(q)
  const parts = path.split("/").filter((p) => p !== "")
  // The write path's pages (commands.ts): #/tenants/:appId/:businessId/commands[/:id]
  if (parts[0] === "tenants" && parts[3] === "commands") {
    return parts.length === 5
      ? html`<${CommandDetail} key=${path} live=${live} appId=${parts[1]} businessId=${parts[2]} id=${decodeURIComponent(parts[4]!)} />`
      : html`<${Commands} key=${parts.slice(0, 3).join("/")} live=${live} appId=${parts[1]} businessId=${parts[2]} query=${query} />`
  }
  switch (parts[0]) {
    case undefined:
      return html`<${Overview} live=${live} />`
    case "tenants":
      return parts.length === 3 ? html`<${TenantDetail} key=${path} live=${live} appId=${parts[1]} businessId=${parts[2]} />` : html`<${Tenants} live=${live} query=${query} />`
    case "limits":
      return html`<${Limits} live=${live} />`
    case "events":
      return html`<${Events} key=${query.get("tenant") ?? ""} live=${live} query=${query} />`
    case "data":
      return html`<${Explorer} live=${live} query=${query} />`
    case "plugins":
      return html`<${Plugins} live=${live} />`
    case "page-service":
      return html`<${PageService} live=${live} query=${query} />`
    case "connect":
      return html`<${Connect} live=${live} />`
    default:
      return html`<h1>Not found</h1><p class="empty">No page ${path}. <a href="#/">Back to the overview</a>.</p>`
  }
}

/** The skip link moves the focus without touching the hash, which is the page's route. */
const skipToContent = (e: Event) => {
  e.preventDefault()
  document.getElementById("main")?.focus()
}

const Console = ({ signOut }: { signOut: () => void }) => {
  const hash = useHash()
  const [live, setLive] = useState<Live>({ state: "connecting" })
  useEffect(() => follow(setLive), [])
  const current = (href: string) => href === "#/" ? hash === "#/" || hash === "" : hash.startsWith(href)
  return html`
    <a class="skip" href="#main" onClick=${skipToContent}>Skip to content</a>
    <header>
      <span class="brand">ocs console</span>
      <nav aria-label="Pages">${NAV.map(([href, label]) => html`<a href=${href} aria-current=${current(href) ? "page" : undefined}>${label}</a>`)}</nav>
      <span class=${`live ${live.state}`} role="status" data-testid="live">${live.state === "live" ? "live" : live.state === "lost" ? "connection lost, retrying" : "connecting"}</span>
      <button type="button" class="signout" onClick=${signOut}>Sign out</button>
    </header>
    ${live.state === "lost" ? html`<p class="failure banner" role="alert">The live stream dropped; the figures below may be stale. Reconnecting…</p>` : null}
    <main id="main" tabindex="-1"><${Page} hash=${hash} live=${live} /></main>
  `
}

const App = () => {
  const [state, setState] = useState<"checking" | "out" | "in">("checking")
  const out = () => (setSession(undefined), setState("out"))
  useEffect(() => {
    setSession(undefined, out)
    api<{ signedIn: boolean; csrf?: string }>("/ui/session").then(
      (s) => (s.signedIn ? (setSession(s.csrf), setState("in")) : setState("out")),
      () => setState("out")
    )
  }, [])
  const signOut = () => void api("/ui/session/end", "POST").finally(out)
  if (state === "checking") return html`<p>Loading…</p>`
  if (state === "out") return html`<${SignIn} done=${(csrf: string) => (setSession(csrf), setState("in"))} />`
  return html`<${Console} signOut=${signOut} />`
}

render(html`<${App} />`, document.getElementById("app")!)
