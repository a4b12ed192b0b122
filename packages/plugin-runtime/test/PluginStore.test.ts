/**
 * The plugin store's file: files written before it had migrations keep opening with their rows,
 * and its timestamps come from the fiber's Clock.
 */
import { assert, describe, it } from "@effect/vitest"
import { PluginStore } from "@ocs/plugin-runtime"
import Database from "better-sqlite3"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

const tempFile = () => NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "ocs-plugin-store-")), "plugins.sqlite")

const tenant = { appId: "1001", businessId: "42" }

describe("PluginStore over a file from an earlier release", () => {
  it.effect("opens a file whose tables were created inline and reads its rows back", () =>
    Effect.gen(function*() {
      const filename = tempFile()
      // The DDL the store ran at every open before it had migrations.
      const old = new Database(filename)
      old.pragma("journal_mode = WAL")
      old.exec(`
        CREATE TABLE IF NOT EXISTS plugin_checkpoints (
          plugin TEXT PRIMARY KEY NOT NULL, checkpoint TEXT NOT NULL, last_offset INTEGER, updated_at INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS plugin_kv (
          plugin TEXT NOT NULL, app_id TEXT NOT NULL, business_id TEXT NOT NULL, key TEXT NOT NULL,
          value TEXT NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (plugin, app_id, business_id, key));
        CREATE TABLE IF NOT EXISTS plugin_dead_letters (
          id INTEGER PRIMARY KEY AUTOINCREMENT, plugin TEXT NOT NULL, event_id TEXT NOT NULL, event_tag TEXT NOT NULL,
          app_id TEXT NOT NULL, business_id TEXT, record_offset INTEGER NOT NULL, record TEXT NOT NULL,
          error TEXT NOT NULL, attempts INTEGER NOT NULL, first_failed_at INTEGER NOT NULL, last_failed_at INTEGER NOT NULL,
          UNIQUE (plugin, event_id));
        INSERT INTO plugin_checkpoints VALUES ('alerts', 'sqlite:17', 17, 1000);
        INSERT INTO plugin_kv VALUES ('alerts', '1001', '42', 'threshold', '{"min":3}', 1000);
        INSERT INTO plugin_dead_letters (plugin, event_id, event_tag, app_id, business_id, record_offset, record, error, attempts, first_failed_at, last_failed_at)
          VALUES ('alerts', 'e-1', 'OrderAdded', '1001', '42', 12, '{"offset":12}', 'boom', 3, 900, 950);
      `)
      old.close()

      const read = yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* PluginStore.make({ filename })
        const checkpoint = yield* store.checkpoint("alerts")
        const kv = store.kv("alerts", tenant)
        const threshold = yield* kv.get("threshold")
        yield* kv.set("sent", true)
        // The dead letters' (plugin, event_id) rule still merges a second failure of one event.
        yield* store.addDeadLetter({
          plugin: "alerts", eventId: "e-1", eventTag: "OrderAdded", appId: "1001", businessId: "42", offset: 12, record: { offset: 12 }, error: "again", attempts: 1
        })
        return { checkpoint, threshold, keys: yield* kv.list(), letters: yield* store.deadLetters("alerts"), count: yield* store.countDeadLetters("alerts") }
      }))
      assert.deepStrictEqual(read.checkpoint, Option.some({ checkpoint: "sqlite:17", offset: 17 }))
      assert.deepStrictEqual(read.threshold, Option.some({ min: 3 }))
      assert.deepStrictEqual(read.keys, [{ key: "sent", value: true }, { key: "threshold", value: { min: 3 } }])
      assert.strictEqual(read.count, 1)
      assert.deepStrictEqual(
        read.letters.map((l) => [l.eventId, l.error, l.attempts, l.firstFailedAt, l.record]),
        [["e-1", "again", 4, 900, { offset: 12 }]]
      )
    }))
})

describe("PluginStore timestamps", () => {
  it.effect("come from the fiber's Clock: TestClock drives them", () =>
    Effect.gen(function*() {
      const filename = tempFile()
      yield* TestClock.setTime(1_000_000)
      const letter = yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* PluginStore.make({ filename })
        yield* store.saveCheckpoint("alerts", "sqlite:5", 5)
        yield* store.kv("alerts", tenant).set("k", 1)
        yield* store.addDeadLetter({
          plugin: "alerts", eventId: "e-9", eventTag: "OrderAdded", appId: "1001", businessId: "42", offset: 9, record: {}, error: "first", attempts: 1
        })
        yield* TestClock.adjust("90 seconds")
        const [added] = yield* store.deadLetters("alerts")
        yield* store.updateDeadLetter(added!.id, "second", 1)
        return (yield* store.deadLetters("alerts"))[0]!
      }))
      assert.strictEqual(letter.firstFailedAt, 1_000_000)
      assert.strictEqual(letter.lastFailedAt, 1_090_000)
      const check = new Database(filename, { readonly: true })
      try {
        const times = [
          (check.prepare("SELECT updated_at AS t FROM plugin_checkpoints").get() as { t: number }).t,
          (check.prepare("SELECT updated_at AS t FROM plugin_kv").get() as { t: number }).t
        ]
        assert.deepStrictEqual(times, [1_000_000, 1_000_000])
      } finally {
        check.close()
      }
    }))
})
