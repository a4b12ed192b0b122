/**
 * `/readyz` means "a webhook sent now would be stored": the event log's file lives on a small
 * tmpfs (the data folder holds a symlink to it) that the test fills while the server runs.
 * Properties: once appends fail (503 `store_failed`), `/readyz` is 503 naming the webhook
 * store; after space returns, the first delivery stored makes it 200 again, without a restart.
 * Nothing answered 200 is lost.
 *
 * Mounting a tmpfs needs root. Off CI and not root the test is skipped with a message; on CI
 * it runs (and fails if it cannot mount).
 */
import { assert, describe, it } from "vitest"
import { envelope, eventually, files, readOnly, request, type Tenant } from "./support/harness.ts"
import { canMountSmallDisk, smallDisks } from "./support/smallDisk.ts"
import { reliabilitySuite } from "./support/suite.ts"

const canMount = canMountSmallDisk("store-readiness", "the event log")

let t: Tenant
const suite = reliabilitySuite({
  simFlags: ["--rate-window", "3", "--products", "5"],
  setup: async (s) => {
    t = await s.tenant({ products: 5, orders: 0 })
  }
})

const disks = smallDisks()

const product = (i: number) => envelope(t, "productUpdate", { id: 9_300_000 + i, name: `store-${i}`, pad: "p".repeat(2000) })

describe("readiness follows the webhook store", () => {
  it.skipIf(!canMount)("/readyz is 503 while stores fail on a full disk, 200 after the first success", async () => {
    const server = suite.server("ocs-rel-storeready-", { tenants: [t], extra: { webhooks: { silenceAlertSeconds: 3600, storeTimeoutSeconds: 5 } } })
    const dataDir = server.dataDir
    const disk = disks.under(dataDir, files(dataDir).events)
    await server.start()
    const url = server.url
    const accepted = new Set<number>()
    for (let i = 0; i < 10; i++) {
      assert.strictEqual((await request(`${url}/webhooks/${t.appId}`, { body: product(i) })).status, 200)
      accepted.add(i)
    }
    await eventually("ready", async () => ((await request(`${url}/readyz`)).status === 200 ? true : undefined), 30_000, 100)

    disk.fill()

    // Deliver until the log refuses (pages the WAL already holds may take a few more).
    let i = 10
    let failed: number | undefined
    for (; i < 5000 && failed === undefined; i++) {
      const a = await request(`${url}/webhooks/${t.appId}`, { body: product(i) })
      if (a.status === 200) accepted.add(i)
      else failed = a.status
    }
    assert.strictEqual(failed, 503, "a delivery the log cannot store is refused for redelivery")
    const notReady = await request(`${url}/readyz`)
    console.log(`[store-readiness] disk full after ${i - 10} more deliveries; /readyz: ${notReady.status} ${notReady.text}`)
    assert.strictEqual(notReady.status, 503)
    assert.include(notReady.text, "webhooks are not being stored")

    disk.free()
    // The first delivery after space returns is stored, and readiness follows it.
    const again = await eventually("a delivery stored again", async () => {
      const a = await request(`${url}/webhooks/${t.appId}`, { body: product(i) })
      return a.status === 200 ? a : undefined
    }, 30_000, 200)
    accepted.add(i)
    assert.strictEqual(again.status, 200)
    const ready = await request(`${url}/readyz`)
    console.log(`[store-readiness] after the first success: /readyz ${ready.status} ${ready.text.slice(0, 200)}`)
    assert.notInclude(ready.text, "webhooks are not being stored")
    await eventually("/readyz to be 200", async () => ((await request(`${url}/readyz`)).status === 200 ? true : undefined), 30_000, 100)

    await server.stop()
    const stored = readOnly(files(dataDir).events, (db) =>
      (db.prepare("SELECT body FROM records WHERE source = 'webhook'").all() as Array<{ body: string }>).map((r) => Number(/"id":(\d+)/.exec(r.body)?.[1]) - 9_300_000))
    const missing = [...accepted].filter((k) => !stored.includes(k))
    assert.deepStrictEqual(missing, [], "every delivery answered 200 is in the log")
  }, 180_000)
})
