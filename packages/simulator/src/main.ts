/**
 * The simulator's program (`bin.ts` launches it): serves the simulator with a demo app, business and
 * token, prints them, and runs until interrupted. `GET /_sim/demo` returns the same JSON.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import * as Json from "@ocs/protocol/Json"
import * as Simulator from "./Simulator.ts"

const simulator = Command.make("ocs-simulator", {
  host: Flag.String("host").pipe(Flag.withDescription("Address to bind (loopback by default)"), Flag.withDefault("127.0.0.1")),
  port: Flag.Int("port").pipe(Flag.withDescription("Port (0 = any free port)"), Flag.withDefault(8788)),
  seed: Flag.Int("seed").pipe(Flag.withDescription("Seed of all generated data"), Flag.withDefault(1)),
  products: Flag.Int("products").pipe(Flag.withDescription("Products of the demo business (up to 1000000)"), Flag.withDefault(1000)),
  orders: Flag.Int("orders").pipe(Flag.withDescription("Orders of the demo business"), Flag.withDefault(200)),
  bills: Flag.Int("bills").pipe(Flag.withDescription("Bills of the demo business"), Flag.withDefault(100)),
  customers: Flag.Int("customers").pipe(Flag.withDescription("Customers of the demo business"), Flag.withDefault(50)),
  historyDays: Flag.Int("history-days").pipe(Flag.withDescription("Days back over which orders and bills are spread"), Flag.withDefault(120)),
  strict: Flag.Boolean("strict").pipe(
    Flag.withDescription("Strict mode: refuse null and unknown filters, ids as strings, rebuilt cursors; rotate cursor shapes; JSON 404s"),
    Flag.withDefault(false)
  ),
  strictCursors: Flag.Boolean("strict-cursors").pipe(
    Flag.withDescription("Refuse cursors that are not the issued text (e.g. keys reordered by a plain-JSON client)"),
    Flag.withDefault(false)
  ),
  messagesForm: Flag.Literals("messages-form", ["default", "string", "array", "object"]).pipe(
    Flag.withDescription("Form of `messages` in failures"),
    Flag.withDefault("default" as const)
  ),
  bigIds: Flag.Boolean("big-ids").pipe(Flag.withDescription("Ids above 2^53 (JSON integer literals)"), Flag.withDefault(false)),
  rateLimit: Flag.Int("rate-limit").pipe(Flag.withDescription("Calls per window per appId+businessId+URL"), Flag.withDefault(150)),
  rateWindow: Flag.Finite("rate-window").pipe(Flag.withDescription("Rate window in seconds (fractions allowed)"), Flag.withDefault(30)),
  noRateLimit: Flag.Boolean("no-rate-limit").pipe(Flag.withDescription("Disable rate limiting"), Flag.withDefault(false))
}, (flags) =>
  Effect.gen(function*() {
    const windowMs = Math.round(flags.rateWindow * 1000)
    const sim = yield* Simulator.start({
      host: flags.host,
      port: flags.port,
      seed: flags.seed,
      products: flags.products,
      orders: flags.orders,
      bills: flags.bills,
      customers: flags.customers,
      historyDays: flags.historyDays,
      // Without --strict, OCS_SIMULATOR_STRICT=1 still selects it (the engine's test suites).
      strict: flags.strict ? true : undefined,
      strictCursors: flags.strictCursors,
      messagesForm: flags.messagesForm,
      bigIds: flags.bigIds,
      rateLimit: { enabled: !flags.noRateLimit, limit: flags.rateLimit, windowMs, lockMs: windowMs, lockGrowthMs: windowMs / 2 }
    })
    yield* Console.log(`ocs-simulator listening on ${sim.url} (control API: ${sim.url}/_sim)`)
    const demo = sim.demo!
    // The same JSON as GET /_sim/demo (ids as JSON integers)
    yield* Console.log(Json.stringify({ ...demo, appId: BigInt(demo.appId), businessId: BigInt(demo.businessId) }))
    return yield* Effect.never
  }).pipe(Effect.scoped)).pipe(Command.withDescription("Open Commerce Service API v3.0 simulator"))

simulator.pipe(
  Command.run({ version: "0.0.0" }),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)
