/**
 * The server serves https from certificate files and takes a renewed pair on SIGHUP without a
 * restart: connections opened after the signal see the new certificate. A pair that cannot
 * be used stops the start with a message naming the files; at a reload, it is refused and the
 * previous certificate stays. Certificates are made for the test with the machine's openssl.
 */
import { assert, describe, it } from "vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Https from "node:https"
import * as Path from "node:path"
import { ADMIN_KEY, eventually, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

let t: Tenant
const suite = reliabilitySuite({
  simFlags: ["--products", "5"],
  setup: async (s) => {
    t = await s.tenant({ products: 2, orders: 0 })
  }
})

/** A self-signed pair for 127.0.0.1 written to `dir/<name>.{crt,key}`. */
const certificate = (dir: string, name: string) => {
  const cert = Path.join(dir, `${name}.crt`)
  const key = Path.join(dir, `${name}.key`)
  ChildProcess.execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", `/CN=${name}`,
    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert
  ], { stdio: "ignore" })
  return { cert, key }
}

/** The subject CN of the certificate a new https connection to `url` is shown, and the answer's status. */
const peer = (url: string) =>
  new Promise<{ readonly cn: string; readonly status: number }>((ok, fail) => {
    const req = Https.get(`${url}/healthz`, { rejectUnauthorized: false, agent: false }, (res) => {
      const cert = (res.socket as import("node:tls").TLSSocket).getPeerCertificate()
      res.resume()
      res.on("end", () => ok({ cn: String(cert.subject?.CN), status: res.statusCode ?? 0 }))
    })
    req.on("error", fail)
    req.setTimeout(5000, () => req.destroy(new Error("timeout")))
  })

describe("TLS", () => {
  it("serves https from files, reloads them on SIGHUP, and keeps the old pair when the new one is unusable", async () => {
    const dir = suite.folder("ocs-rel-tls-")
    const first = certificate(dir, "first")
    const second = certificate(dir, "second")
    const live = { certFile: Path.join(dir, "live.crt"), keyFile: Path.join(dir, "live.key") }
    Fs.copyFileSync(first.cert, live.certFile)
    Fs.copyFileSync(first.key, live.keyFile)
    const server = suite.server("ocs-rel-tls-", { tenants: [t], extra: { server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY, tls: live } } })
    const running = await server.start()
    assert.match(running.url, /^https:\/\//)
    assert.deepStrictEqual(await peer(running.url), { cn: "first", status: 200 })

    // Renewed pair, then SIGHUP: new connections see it.
    Fs.copyFileSync(second.cert, live.certFile)
    Fs.copyFileSync(second.key, live.keyFile)
    running.proc.child.kill("SIGHUP")
    await eventually("the renewed certificate", async () => ((await peer(running.url)).cn === "second" ? true : undefined), 10_000)

    // A key that does not fit the certificate: refused, the previous pair stays.
    Fs.copyFileSync(first.key, live.keyFile)
    running.proc.child.kill("SIGHUP")
    await eventually("the refusal logged", async () => (server.output().includes("TLS reload refused") ? true : undefined), 10_000)
    assert.deepStrictEqual(await peer(running.url), { cn: "second", status: 200 })
    assert.strictEqual(await server.stop(), 0)

    // Files that cannot be read stop the start with a message naming them.
    const broken = suite.server("ocs-rel-tls-bad-", { tenants: [t], extra: { server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY, tls: { certFile: Path.join(dir, "missing.crt"), keyFile: live.keyFile } } } })
    let refused = ""
    await broken.start().catch((e: unknown) => { refused = `${String(e)}\n${broken.output()}` })
    assert.include(refused, "missing.crt")
  })
})
