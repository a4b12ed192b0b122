import { assert, describe, it, layer } from "@effect/vitest"
import { Ingestion, SourceAddresses } from "@ocs/ingestion"
import { Webhook } from "@ocs/protocol"
import { Effect } from "effect"
import { addApp, envelope, hook, post, receiverLayer, recordsOf } from "./helpers.ts"

describe("SourceAddresses", () => {
  it("normalizes the forms peers and proxies write", () => {
    assert.strictEqual(SourceAddresses.normalize("::ffff:34.80.42.152"), "34.80.42.152")
    assert.strictEqual(SourceAddresses.normalize(" 34.80.42.152:443 "), "34.80.42.152")
    assert.strictEqual(SourceAddresses.normalize("[2001:db8::1]:8443"), "2001:db8::1")
  })

  it("matches addresses and CIDR ranges of both families; refuses garbage", () => {
    const list = SourceAddresses.makeList(["34.80.42.152", "10.0.0.0/8", "2001:db8::/32"])
    assert.isTrue(list.has("34.80.42.152"))
    assert.isTrue(list.has("::ffff:10.1.2.3"))
    assert.isTrue(list.has("2001:db8::5"))
    assert.isFalse(list.has("34.80.42.153"))
    assert.isFalse(list.has("not an address"))
    assert.throws(() => SourceAddresses.makeList(["34.80.42"]), /34\.80\.42/)
    assert.throws(() => SourceAddresses.makeList(["10.0.0.0/33"]))
  })

  it("honours X-Forwarded-For only from a trusted proxy, taking the right-most untrusted hop", () => {
    const proxies = SourceAddresses.makeList(["127.0.0.1", "10.0.0.0/8"])
    assert.deepStrictEqual(SourceAddresses.resolve("203.0.113.9", "34.80.42.152", proxies), {
      peer: "203.0.113.9",
      client: "203.0.113.9"
    })
    assert.strictEqual(SourceAddresses.resolve("127.0.0.1", "34.80.42.152", proxies).client, "34.80.42.152")
    assert.strictEqual(SourceAddresses.resolve("127.0.0.1", "34.80.42.152, 6.6.6.6", proxies).client, "6.6.6.6")
    assert.strictEqual(SourceAddresses.resolve("127.0.0.1", "6.6.6.6, 34.80.42.152, 10.0.0.7", proxies).client, "34.80.42.152")
    assert.strictEqual(SourceAddresses.resolve("127.0.0.1", "10.0.0.9, 10.0.0.7", proxies).client, "10.0.0.9")
    assert.strictEqual(SourceAddresses.resolve("127.0.0.1", undefined, proxies).client, "127.0.0.1")
    assert.strictEqual(SourceAddresses.resolve("127.0.0.1", "34.80.42.152", undefined).client, "127.0.0.1")
  })
})

layer(receiverLayer({ sourceAllowlist: true }), { excludeTestServices: true })("Ingestion source allowlist", (it) => {
  it.effect("on with the spec's list: a direct loopback delivery is 403 and not stored", () =>
    Effect.gen(function*() {
      const appId = yield* addApp()
      const url = yield* hook(appId)
      const ingestion = yield* Ingestion.Ingestion
      yield* ingestion.setTrustedProxies([])
      const before = (yield* ingestion.metrics).rejected.forbidden_source
      const reply = yield* post(url, envelope({}))
      assert.strictEqual(reply.status, 403)
      assert.strictEqual(JSON.parse(reply.body).error, "forbidden_source")
      // X-Forwarded-For from a peer that is not a trusted proxy is not believed.
      assert.strictEqual((yield* post(url, envelope({}), { headers: { "x-forwarded-for": Webhook.defaultSourceAddresses[0]! } })).status, 403)
      assert.strictEqual((yield* recordsOf(appId)).length, 0)
      assert.strictEqual((yield* ingestion.metrics).rejected.forbidden_source - before, 2)
    }))

  it.effect("behind a trusted proxy: the right-most untrusted X-Forwarded-For hop is judged and recorded", () =>
    Effect.gen(function*() {
      const appId = yield* addApp()
      const url = yield* hook(appId)
      const ingestion = yield* Ingestion.Ingestion
      yield* ingestion.setTrustedProxies(["127.0.0.1"])
      const spec = Webhook.defaultSourceAddresses[1]!
      const ok = yield* post(url, envelope({ data: { n: 1 } }), { headers: { "x-forwarded-for": spec } })
      assert.strictEqual(ok.status, 200)
      // A forged left-most hop does not help, nor hurt.
      assert.strictEqual((yield* post(url, envelope({ data: { n: 2 } }), { headers: { "x-forwarded-for": `${spec}, 6.6.6.6` } })).status, 403)
      assert.strictEqual((yield* post(url, envelope({ data: { n: 3 } }), { headers: { "x-forwarded-for": `6.6.6.6, ${spec}` } })).status, 200)
      const records = yield* recordsOf(appId)
      assert.deepStrictEqual(records.map((r) => [r.meta["remoteAddress"], r.meta["clientAddress"], r.meta["forwardedFor"]]), [
        ["127.0.0.1", spec, spec],
        ["127.0.0.1", spec, `6.6.6.6, ${spec}`]
      ])
      yield* ingestion.setTrustedProxies([])
    }))

  it.effect("the list can change while running; off again accepts any source", () =>
    Effect.gen(function*() {
      const appId = yield* addApp()
      const url = yield* hook(appId)
      const ingestion = yield* Ingestion.Ingestion
      yield* ingestion.setSourceAllowlist(["127.0.0.0/8"])
      assert.strictEqual((yield* post(url, envelope({ data: { n: 1 } }))).status, 200)
      yield* ingestion.setSourceAllowlist(["34.80.42.152"])
      assert.strictEqual((yield* post(url, envelope({ data: { n: 2 } }))).status, 403)
      yield* ingestion.setSourceAllowlist(false)
      assert.strictEqual((yield* post(url, envelope({ data: { n: 3 } }))).status, 200)
      const bad = yield* Effect.flip(ingestion.setSourceAllowlist(["nonsense"]))
      assert.strictEqual(bad._tag, "InvalidAddressList")
      yield* ingestion.setSourceAllowlist(true)
      assert.strictEqual((yield* post(url, envelope({ data: { n: 4 } }))).status, 403)
      assert.strictEqual((yield* recordsOf(appId)).length, 2)
    }))
})
