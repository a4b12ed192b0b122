/**
 * A small, realistic event log for the CLI tests: webhooks (productAdd, productUpdate,
 * inventoryChange, orderAdd), a product/list sync page, a transport.LockTaken system record,
 * two tenants (one businessId beyond 2^53) and one duplicate delivery (a dedupe decision).
 * `live` is the same log projected by ReadModels as the sync server does (catchUp).
 */
import { EventLog, type LogRecord, SqliteEventLog } from "@ocs/event-log"
import { EngineRecord, Json } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { type RunResult, runNode } from "@ocs/testkit/Processes"
import Database from "better-sqlite3"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"

export const BIN = NodeUrl.fileURLToPath(new URL("../src/bin.ts", import.meta.url))

export const APP = "1001"
export const BIZ = "9007199254740993001"
export const OTHER = "42"
export const TENANT = `${APP}:${BIZ}`
export const OTHER_TENANT = `${APP}:${OTHER}`
export const P1 = "9007199254740993"
export const P2 = "9007199254740995"
/** A name a CSV must quote: a quote, a comma and a line break. */
export const P2_NAME = "Trà \"đá\", lạnh\nmới"
export const ORDER = "7000000000000001"
export const T0 = Date.UTC(2024, 4, 1, 10, 0, 0)
export const HOUR = 3_600_000

const webhook = (businessId: string, event: string, data: unknown, receivedAt: number, dedupeKey?: string): LogRecord.NewRecord => ({
  appId: APP,
  businessId,
  source: "webhook",
  type: event,
  receivedAt,
  dedupeKey: dedupeKey ?? null,
  body: Json.stringify({ event, businessId: BigInt(businessId), webhooksVerifyToken: "verify", data })
})

const product = (id: string, name: string, price: number, updatedAt: number) =>
  ({ id: BigInt(id), code: `SKU-${id.slice(-2)}`, name, price, updatedAt: new Date(updatedAt).toISOString() })

/** In log order (offsets 1..9); the duplicate is appended last and refused. */
export const records = (): Array<LogRecord.NewRecord> => [
  webhook(BIZ, "productAdd", product(P1, "Cà phê", 10.5, T0), T0, "productAdd:p1"),
  webhook(BIZ, "productAdd", product(P2, P2_NAME, 20, T0), T0 + 1000, "productAdd:p2"),
  // v3: an array of products (named `id`), each with its depots.
  webhook(BIZ, "inventoryChange", [{ id: BigInt(P1), remain: 5, available: 4, depots: [{ id: 1, remain: 5, available: 4 }] }], T0 + 2000),
  // v3: the order nested as order/list nests it.
  webhook(BIZ, "orderAdd", {
    info: { id: BigInt(ORDER), type: 1, status: 54, depotId: 1, createdAt: (T0 + 3000) / 1000, updatedAt: (T0 + 3000) / 1000 },
    channel: { appOrderId: "web-1", saleChannel: 2 },
    shippingAddress: { name: "Trần Thị B", mobile: "0900000001" },
    products: [{ productId: BigInt(P1), quantity: 2, price: 10.5 }]
  }, T0 + 3000),
  {
    appId: APP, businessId: BIZ, source: "sync", type: "product/list.page", receivedAt: T0 + HOUR,
    meta: EngineRecord.entityMeta({ kind: "product", idField: "id", updatedAtField: "updatedAt" }) as unknown as LogRecord.Meta,
    body: Json.stringify({ code: 1, data: [product(P1, "Cà phê", 11, T0 + HOUR - 60_000), product(P2, P2_NAME, 20, T0)], paginator: { next: null } })
  },
  webhook(BIZ, "productUpdate", product(P1, "Cà phê sữa", 12, T0 + 2 * HOUR), T0 + 2 * HOUR),
  {
    appId: APP, businessId: BIZ, source: "system", type: "transport.LockTaken", receivedAt: T0 + 2 * HOUR + 60_000,
    body: JSON.stringify({ appId: APP, businessId: BIZ, operation: "product/list", key: `${APP}:${BIZ}:pos:product/list`, _tag: "LockTaken", until: T0 + 2 * HOUR + 90_000, lockedSeconds: 30, receivedAt: T0 + 2 * HOUR + 60_000 })
  },
  webhook(OTHER, "productAdd", product("5", "Bánh mì", 3, T0 + 24 * HOUR), T0 + 24 * HOUR, "productAdd:5"),
  webhook(OTHER, "orderAdd", { info: { id: 8, status: 60, updatedAt: (T0 + 25 * HOUR) / 1000 }, channel: { appOrderId: "web-2" }, shippingAddress: { name: "Lê C" } }, T0 + 25 * HOUR)
]

export interface Fixture {
  readonly dir: string
  readonly log: string
  readonly live: string
}

export const tempDir = (prefix = "ocs-replay-test-"): string => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), prefix))

/** Writes the log (plus a duplicate delivery) and projects it into the live file. */
export const makeFixture = (): Promise<Fixture> => {
  const dir = tempDir()
  const log = NodePath.join(dir, "events.sqlite")
  const live = NodePath.join(dir, "live.sqlite")
  return Effect.runPromise(Effect.gen(function*() {
    const eventLog = yield* EventLog.EventLog
    for (const r of records()) yield* eventLog.append([r])
    // A redelivery of the second webhook (same dedupeKey): refused, recorded in dedupe_decisions.
    const [dup] = yield* eventLog.append([{ ...records()[1]!, receivedAt: T0 + 5000 }])
    if (dup?._tag !== "Duplicate") throw new Error("expected a duplicate")
    const rm = yield* ReadModels.ReadModels
    yield* rm.catchUp()
  }).pipe(
    Effect.scoped,
    Effect.provide(Layer.mergeAll(
      SqliteEventLog.layer({ filename: log, synchronous: "NORMAL", dedupeWindowMillis: 1000 * 24 * HOUR }),
      // The log stays exactly the records above: the live projection does not append the
      // changes it would find in the sync page (docs/architecture.md §4.14).
      ReadModels.ReadModels.layer({ filename: live, detectChanges: false })
    ))
  )).then(() => ({ dir, log, live }))
}

export type CliResult = RunResult

/** Runs the CLI as a process (real startup and exit codes). */
export const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<CliResult> => runNode([BIN, ...args], { env })

/** Digest of a read-model file as ReadModels computes it. */
export const digest = (filename: string, tenant?: { readonly appId: string; readonly businessId: string }) =>
  Effect.runPromise(Effect.gen(function*() {
    const rm = yield* ReadModels.ReadModels
    return yield* rm.digest(tenant ?? "all")
  }).pipe(Effect.scoped, Effect.provide(ReadModels.ReadModels.layer({ filename }))))

/** Runs SQL on a copy of a file (tampering with a live read-model file). */
export const tamper = (from: string, to: string, statements: ReadonlyArray<string>): void => {
  NodeFs.copyFileSync(from, to)
  const db = new Database(to)
  try {
    for (const sql of statements) db.exec(sql)
  } finally {
    db.close()
  }
}

if (import.meta.main) {
  const f = await makeFixture()
  console.log(JSON.stringify(f))
}
