/**
 * The tenant registry shared through a compacted topic: what one server's store is told, every
 * other server's store holds, tokens sealed on the topic.
 */
import { assert, describe, it } from "@effect/vitest"
import { kafkaBrokers, kafkaUnavailable, readTopic } from "@ocs/kafka-broker/testing"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { Kafka, logLevel } from "kafkajs"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { makeSealer } from "@ocs/tenant-store/Secrets"
import * as SharedTenants from "@ocs/tenant-store/SharedTenants"
import { TenantDatabase } from "@ocs/tenant-store/TenantDatabase"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"

const topic = `ocs-tenants-test-${process.pid}-${Date.now()}`
const sealer = makeSealer(Buffer.alloc(32, 7))
const ACCESS_TOKEN = "access-token-that-must-stay-sealed-0001"
const SECRET_KEY = "secret-key-that-must-stay-sealed-0001"

/** One server's store: its own file, shared through the topic. */
const start = Effect.map(
  Layer.build(SharedTenants.layer({ brokers: kafkaBrokers(), topic, sealer }).pipe(
    Layer.provide(TenantRegistry.layer({ sealer })),
    Layer.provide(TenantDatabase.layer({ filename: Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "shared-tenants-")), "tenants.sqlite") }))
  )),
  (context) => Context.get(context, TenantRegistry)
)

const eventually = <A>(check: Effect.Effect<A | undefined, unknown>): Effect.Effect<A, unknown> =>
  Effect.flatMap(check, (a) => (a !== undefined ? Effect.succeed(a) : Effect.flatMap(Effect.sleep(20), () => eventually(check))))

const topicText = Effect.promise(async () => (await readTopic(kafkaBrokers(), topic)).map((m) => m.value).join("\n"))

describe.skipIf(kafkaUnavailable())("tenant registry shared by the servers of one cluster", () => {
  it.live("apps, businesses, status, settings and removals reach every server; tokens stay sealed on the topic", () =>
    Effect.gen(function*() {
      const a = yield* start
      const b = yield* start
      yield* a.upsertApp("7001", ["verify-1"], true, { secretKey: SECRET_KEY, publicUrl: "https://sync.example" })
      yield* a.upsertBusiness({ appId: "7001", businessId: "8001", accessToken: ACCESS_TOKEN, permissions: ["product"], pages: ["p-1"] })
      yield* a.upsertBusiness({ appId: "7001", businessId: "8002", accessToken: "other-token-0002" })
      const seen = yield* eventually(Effect.map(b.business("7001", "8001"), Option.getOrUndefined))
      assert.strictEqual(Redacted.value(seen.accessToken), ACCESS_TOKEN)
      assert.deepStrictEqual(seen.permissions, ["product"])
      assert.deepStrictEqual(seen.pages, ["p-1"])
      assert.isTrue(Option.isSome(yield* b.app("7001")))
      // A rotation of verify tokens that does not name the secret key keeps it, here and on the topic.
      yield* a.upsertApp("7001", ["verify-1", "verify-2"])

      // Changes made on B reach A: a pause, and a removal.
      yield* eventually(Effect.map(b.business("7001", "8002"), Option.getOrUndefined))
      yield* b.setStatus("7001", "8001", "paused")
      yield* b.removeBusiness("7001", "8002")
      yield* eventually(Effect.map(a.business("7001", "8001"), (o) => Option.isSome(o) && o.value.status === "paused" ? true : undefined))
      yield* eventually(Effect.map(a.business("7001", "8002"), (o) => Option.isNone(o) ? true : undefined))

      // A tenant's own sync settings, set through one server's admin API, hold on the others.
      yield* b.setSettings("7001", "8001", { resources: ["product/list"], intervalSeconds: 300 })
      yield* eventually(Effect.map(a.business("7001", "8001"), (o) => Option.isSome(o) && o.value.settings.intervalSeconds === 300 ? true : undefined))
      assert.deepStrictEqual(Option.getOrThrow(yield* a.business("7001", "8001")).settings.resources, ["product/list"])

      // A server that starts now has it all before it serves.
      const c = yield* start
      const late = Option.getOrThrow(yield* c.business("7001", "8001"))
      assert.strictEqual(late.status, "paused")
      assert.strictEqual(late.settings.intervalSeconds, 300)
      assert.strictEqual(Redacted.value(late.accessToken), ACCESS_TOKEN)
      assert.isTrue(Option.isNone(yield* c.business("7001", "8002")))
      const app = Option.getOrThrow(yield* c.app("7001"))
      assert.strictEqual(Redacted.value(app.secretKey!), SECRET_KEY)
      assert.strictEqual(app.publicUrl, "https://sync.example")

      const text = yield* topicText
      assert.include(text, `"businessId":"8001"`)
      assert.notInclude(text, ACCESS_TOKEN)
      assert.notInclude(text, "verify-1")
      assert.notInclude(text, SECRET_KEY)
      // The topic is compacted: the latest record of the app alone must still carry the sealed key.
      const appRecords = text.split("\n").filter((line) => line.includes(`"kind":"app"`) && line.includes(`"appId":"7001"`))
      assert.match(appRecords[appRecords.length - 1]!, /"secretKey":"gcm1:/)
    }).pipe(Effect.scoped), 120_000)

  it.live("a business that arrives before its application, and a status before its business, are applied when their parent comes", () =>
    Effect.gen(function*() {
      // Written straight to the topic, as another server would, with no application yet:
      // the keys of one tenant fall on different partitions, so this order happens.
      const stamp = (seq: number) => ({ v: 1, origin: "another-server", seq, at: Date.now() + seq })
      yield* Effect.promise(async () => {
        const producer = new Kafka({ brokers: [...kafkaBrokers()], logLevel: logLevel.NOTHING }).producer()
        await producer.connect()
        await producer.send({
          topic,
          messages: [
            {
              key: "business:7101:8101",
              value: JSON.stringify({
                ...stamp(1),
                kind: "business",
                appId: "7101",
                businessId: "8101",
                removed: false,
                accessToken: sealer.seal(ACCESS_TOKEN),
                version: null,
                permissions: ["order"],
                depots: [],
                grantedAt: null,
                expiresAt: null
              })
            },
            { key: "status:7101:8101", value: JSON.stringify({ ...stamp(2), kind: "status", appId: "7101", businessId: "8101", status: "paused", attention: null }) }
          ]
        })
        await producer.disconnect()
      })
      const waiting = yield* start
      assert.isTrue(Option.isNone(yield* waiting.business("7101", "8101")), "no business without its application")

      const other = yield* start
      yield* other.upsertApp("7101", ["verify-7101"])
      const arrived = yield* eventually(Effect.map(waiting.business("7101", "8101"), (o) => Option.isSome(o) && o.value.status === "paused" ? o.value : undefined))
      assert.strictEqual(Redacted.value(arrived.accessToken), ACCESS_TOKEN)
      assert.deepStrictEqual(arrived.permissions, ["order"])
    }).pipe(Effect.scoped), 120_000)
  it.live("a write of an older grant (a token check on another server) never goes back over a newer grant, whatever arrives last", () =>
    Effect.gen(function*() {
      const a = yield* start
      const b = yield* start
      const tenant = { appId: "7201", businessId: "8201" }
      const first = Date.now() - 60_000
      yield* a.upsertApp("7201", ["verify-7201"], true, { secretKey: SECRET_KEY })
      yield* a.upsertBusiness({ ...tenant, accessToken: "token-of-the-first-grant", grantedAt: first, expiresAt: first + 365 * 86_400_000 })
      yield* eventually(Effect.map(b.business("7201", "8201"), (o) => Option.isSome(o) ? true : undefined))
      // A grants again; then, later by the clock, B writes back what its check said of the
      // first token (its expiry cut to the overlap): the same grant time, a later arrival.
      const second = Date.now()
      yield* a.upsertBusiness({ ...tenant, accessToken: "token-of-the-second-grant", grantedAt: second, expiresAt: second + 365 * 86_400_000 })
      yield* Effect.sleep("5 millis")
      yield* b.upsertBusiness({ ...tenant, accessToken: "token-of-the-first-grant", grantedAt: first, expiresAt: second + 15 * 60_000 })
      const tokenOf = (s: TenantRegistry["Service"]) => Effect.map(s.business("7201", "8201"), (o) => Redacted.value(Option.getOrThrow(o).accessToken))
      for (const s of [a, b]) yield* eventually(Effect.map(tokenOf(s), (t) => t === "token-of-the-second-grant" ? true : undefined))
      // A server that starts now reads every change from the topic: the grant is the last word.
      const late = yield* start
      assert.strictEqual(yield* tokenOf(late), "token-of-the-second-grant")
      assert.strictEqual(yield* tokenOf(a), "token-of-the-second-grant")
      assert.strictEqual(yield* tokenOf(b), "token-of-the-second-grant")
      // The topic keeps the last value of a key: it is the second grant's (published again by
      // a server that saw the older one arrive after it).
      yield* eventually(Effect.map(topicText, (text) => {
        const records = text.split("\n").filter((line) => line.includes(`"kind":"business"`) && line.includes(`"businessId":"8201"`))
        return records[records.length - 1]!.includes(`"gen":${second}`) ? true : undefined
      }))
    }).pipe(Effect.scoped), 60_000)
})
