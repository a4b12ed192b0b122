/**
 * The write path's benchmarks (docs/architecture.md §4.31), the simulator in its own process:
 *
 * - budget use: product.edit commands (one call each) of 1 tenant and of many (1,000; 20 with
 *   --quick) sent as fast as the write lane allows, against a simulator counting the service's
 *   budget (compressed windows): calls that arrived in each key's first `D` seconds over what the
 *   budget allows in `D` (target >= 0.95), and the ERR_429 answers (target 0);
 * - coalescing: product.add commands of one tenant queued at once: items per call (target >= 90);
 * - engine CPU per command (stored, sent, answered, confirmed) beside its baseline, the same
 *   calls made bare with fetch from this process, in the same run.
 *
 *   ./ocs node packages/commands/bench/commands.bench.ts [--quick]
 */
import { NodeHttpClient } from "@effect/platform-node"
import { SqliteEventLog } from "@ocs/event-log"
import { SimulatorControl } from "@ocs/simulator"
import { CommerceClient, RateLimiter, RateLimitStore, TransportEvents } from "@ocs/transport"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { NoAccess } from "../src/Command.ts"
import { CommandEngine, CommandTenants } from "../src/CommandEngine.ts"

const here = Path.dirname(fileURLToPath(import.meta.url))

const cpuMicros = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

/** CPU (user + system) of this thread alone (the main thread). */
const threadMicros = () => {
  const u = process.threadCpuUsage()
  return u.user + u.system
}

/** CPU (user + system) a child process has used, from /proc (0 where there is none). */
const childCpuMicros = (pid: number | undefined): number => {
  try {
    const fields = Fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    // utime and stime are fields 14 and 15 of stat (11 and 12 after the command name), in clock ticks (100 a second).
    return (Number(fields[11]) + Number(fields[12])) * 10_000
  } catch {
    return 0
  }
}

const startSim = (flags: ReadonlyArray<string>) =>
  new Promise<{ readonly url: string; readonly stop: () => void; readonly cpuMicros: () => number }>((resolve, reject) => {
    const child = spawn(process.execPath, [Path.join(here, "..", "..", "simulator", "src", "bin.ts"), "--port", "0", "--products", "3", ...flags], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(out)
      if (match !== null) resolve({ url: match[1]!, stop: () => child.kill("SIGINT"), cpuMicros: () => childCpuMicros(child.pid) })
    })
    child.once("exit", (code) => reject(new Error(`simulator exited with ${code}: ${out}`)))
  })

interface Tenant {
  readonly appId: string
  readonly businessId: string
  readonly token: string
  readonly productId: string
}

const setup = async (url: string, count: number) => {
  const control = new SimulatorControl(url)
  const demo = await (await fetch(`${url}/_sim/demo`)).json() as { posBaseUrl: string; vpageBaseUrl?: string }
  const tenants: Array<Tenant> = []
  for (let i = 0; i < count; i++) {
    const t = await control.createTenant({ products: 1, orders: 0 })
    const appId = String(t.app.appId)
    const businessId = String(t.business.businessId)
    const listed = await (await fetch(`${demo.posBaseUrl}/v3.0/product/list?appId=${appId}&businessId=${businessId}`, {
      method: "POST",
      headers: { Authorization: t.token.accessToken, "Content-Type": "application/json" },
      body: JSON.stringify({ paginator: { size: 1 } })
    })).json() as { data: Array<{ id: number }> }
    tenants.push({ appId, businessId, token: t.token.accessToken, productId: String(listed.data[0]!.id) })
  }
  return { control, posBaseUrl: demo.posBaseUrl, vpageBaseUrl: demo.vpageBaseUrl ?? demo.posBaseUrl, tenants }
}

const stack = (base: { posBaseUrl: string; vpageBaseUrl: string }, tenants: ReadonlyArray<Tenant>, options: {
  readonly overrides?: Record<string, { requests: number; windowSeconds: number }>
}) => {
  const tokens = new Map(tenants.map((t) => [`${t.appId}:${t.businessId}`, t.token]))
  const events = TransportEvents.TransportEvents.collect([])
  // The scheduler's default maxInFlight (256): the only slot, taken while a call is on the wire.
  const limiter = RateLimiter.RateLimiter.layer({ skewAllowanceMs: 250, ...(options.overrides === undefined ? {} : { overrides: options.overrides }) }).pipe(
    Layer.provide(RateLimitStore.RateLimitStore.layerMemory),
    Layer.provide(events)
  )
  const client = CommerceClient.CommerceClient.layer({ posBaseUrl: base.posBaseUrl, vpageBaseUrl: base.vpageBaseUrl, timeoutMs: 10_000 }).pipe(
    Layer.provideMerge(limiter),
    Layer.provide(events),
    Layer.provide(NodeHttpClient.layerUndici)
  )
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "commands-bench-"))
  return CommandEngine.layer().pipe(
    Layer.provide(client),
    Layer.provide(SqliteEventLog.layer({ filename: Path.join(dir, "events.sqlite") })),
    Layer.provide(Layer.succeed(CommandTenants, CommandTenants.of({
      access: (t) => {
        const token = tokens.get(`${t.appId}:${t.businessId}`)
        return token === undefined ? Effect.fail(new NoAccess({ ...t, message: "unknown" })) : Effect.succeed(CommerceClient.tenantAccess(t.appId, t.businessId, token))
      }
    })))
  )
}

const admin = { type: "admin" } as const
/** A product/edit budget far above any load here: the engine's CPU is measured, not budget waits. */
const UNBOUNDED = { "/v3.0/product/edit": { requests: 1_000_000, windowSeconds: 1 } }
/** Requests submitted at once in the budget runs. */
const SUBMITTERS = 256

export interface BudgetFigure {
  readonly tenants: number
  readonly limit: number
  readonly windowSeconds: number
  readonly measuredSeconds: number
  /** Mean over keys of calls in the key's first `measuredSeconds` / what the budget allows then. */
  readonly use: number
  readonly minUse: number
  readonly err429: number
  readonly calls: number
  /** CPU over the run (submits, sends, the wait): this process (the engine) and the simulator's process. */
  readonly engineCpuSeconds: number
  /** Commands submitted, and the engine's CPU over the run per command (the waits included). */
  readonly commands: number
  readonly engineMicrosPerCommand: number
  readonly simulatorCpuSeconds: number
  readonly wallSeconds: number
}

/** Budget use of the write lane: every tenant has more product.edit commands than its budget allows. */
export const runBudget = async (tenantCount: number, limit: number, windowSeconds: number, measuredWindows: number): Promise<BudgetFigure> => {
  const sim = await startSim(["--rate-limit", String(limit), "--rate-window", String(windowSeconds)])
  try {
    const s = await setup(sim.url, tenantCount)
    const measuredMs = measuredWindows * windowSeconds * 1000
    const perTenant = Math.ceil(limit * measuredWindows * 1.25) + limit
    const since = Date.now()
    const engineFrom = cpuMicros()
    const simFrom = sim.cpuMicros()
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const engine = yield* CommandEngine
      // Round robin over tenants, so every key has work from the start; many callers at once
      // (the clients of many businesses), each waiting for its request to be stored.
      const asks = Array.from({ length: perTenant }, (_, i) => s.tenants.map((t) => ({ t, i }))).flat()
      yield* Effect.forEach(asks, ({ i, t }) =>
        engine.submit({ tenant: t, kind: "product.edit", payload: { id: t.productId, price: 1000 + i }, requestedBy: admin, idempotencyKey: `b-${i}` }), { concurrency: SUBMITTERS, discard: true })
      // Until every key's measured span has passed.
      yield* Effect.sleep(measuredMs + windowSeconds * 1000 + 1000)
    }).pipe(Effect.provide(stack(s, s.tenants, {
      overrides: { "/v3.0/product/edit": { requests: limit, windowSeconds } }
    })))))
    const engineCpuSeconds = (cpuMicros() - engineFrom) / 1e6
    const simulatorCpuSeconds = (sim.cpuMicros() - simFrom) / 1e6
    const wallSeconds = (Date.now() - since) / 1000
    const calls = (await s.control.calls({ operation: "product/edit", sinceMs: since, limit: 10_000_000 })).calls
    const byKey = new Map<string, Array<number>>()
    for (const c of calls) if (c.outcome === "ok") byKey.set(`${c.appId}:${c.businessId}`, [...(byKey.get(`${c.appId}:${c.businessId}`) ?? []), c.at])
    const allowed = limit * measuredWindows
    const uses = s.tenants.map((t) => {
      const ats = byKey.get(`${t.appId}:${t.businessId}`) ?? []
      const t0 = Math.min(...ats)
      return ats.filter((a) => a < t0 + measuredMs).length / allowed
    })
    return {
      tenants: tenantCount,
      limit,
      windowSeconds,
      measuredSeconds: measuredMs / 1000,
      use: uses.reduce((a, b) => a + b, 0) / uses.length,
      minUse: Math.min(...uses),
      err429: calls.filter((c) => c.outcome === "ERR_429").length,
      calls: calls.length,
      engineCpuSeconds,
      commands: perTenant * tenantCount,
      engineMicrosPerCommand: (engineCpuSeconds * 1e6) / (perTenant * tenantCount),
      simulatorCpuSeconds,
      wallSeconds
    }
  } finally {
    sim.stop()
  }
}

export interface CoalescingFigure {
  readonly commands: number
  readonly calls: number
  readonly itemsPerCall: number
  readonly commandsPerSecond: number
}

/** product.add commands of one tenant queued at once: items per call. */
export const runCoalescing = async (count: number): Promise<CoalescingFigure> => {
  const sim = await startSim([])
  try {
    const s = await setup(sim.url, 1)
    const t = s.tenants[0]!
    const since = Date.now()
    const started = performance.now()
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const engine = yield* CommandEngine
      const submitted = yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
        engine.submit({
          tenant: t,
          kind: "product.add",
          payload: { appProductId: `SUP-${i}`, name: `Sản phẩm ${i}`, code: `SP${i}`, price: 100_000 + i, importPrice: 60_000, unit: "cái", description: "nhập từ nhà cung cấp" },
          requestedBy: admin,
          idempotencyKey: `p-${i}`
        }), { concurrency: 256 })
      yield* Effect.forEach(submitted, (x) => engine.outcome(t, x.command.id), { concurrency: "unbounded", discard: true })
    }).pipe(Effect.provide(stack(s, s.tenants, {})))))
    const seconds = (performance.now() - started) / 1000
    const calls = (await s.control.calls({ operation: "product/add", sinceMs: since, limit: 100_000 })).calls.filter((c) => c.outcome === "ok").length
    const effects = (await s.control.countEffects(t.businessId, { kind: "product.add", keys: Array.from({ length: count }, (_, i) => `SUP-${i}`) }))
    const made = Object.values(effects.keys).reduce((a, b) => a + b, 0)
    return { commands: made, calls, itemsPerCall: made / calls, commandsPerSecond: count / seconds }
  } finally {
    sim.stop()
  }
}

export interface CpuFigure {
  readonly commands: number
  readonly engineMicrosPerCommand: number
  readonly bareMicrosPerCall: number
  readonly ratio: number
}

/** Engine CPU per command (stored, sent, answered, confirmed) beside a bare call to the simulator. */
export const runCpu = async (count: number): Promise<CpuFigure> => {
  const sim = await startSim(["--no-rate-limit"])
  try {
    const s = await setup(sim.url, 1)
    const t = s.tenants[0]!
    // Baseline: the same product/edit calls, bare (fetch, keep-alive), 16 at a time.
    const url = `${s.posBaseUrl}/v3.0/product/edit?appId=${t.appId}&businessId=${t.businessId}`
    const bareFrom = cpuMicros()
    let next = 0
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < count) {
        const i = next++
        const r = await fetch(url, { method: "POST", headers: { Authorization: t.token, "Content-Type": "application/json" }, body: JSON.stringify({ id: Number(t.productId), price: 2000 + i }) })
        await r.text()
      }
    }))
    const bare = (cpuMicros() - bareFrom) / count
    const engine = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const e = yield* CommandEngine
      const from = cpuMicros()
      const submitted = yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
        e.submit({ tenant: t, kind: "product.edit", payload: { id: t.productId, price: 3000 + i }, requestedBy: admin, idempotencyKey: `c-${i}` }), { concurrency: 16 })
      yield* Effect.forEach(submitted, (x) => e.outcome(t, x.command.id), { concurrency: "unbounded", discard: true })
      return (cpuMicros() - from) / count
      // The engine's own budget for product/edit far above the load: the CPU of commands, not of
      // minutes of waiting for the default budget (150 calls / 30 s) between them.
    }).pipe(Effect.provide(stack(s, s.tenants, { overrides: UNBOUNDED })))))
    return { commands: count, engineMicrosPerCommand: engine, bareMicrosPerCall: bare, ratio: engine / bare }
  } finally {
    sim.stop()
  }
}

export interface EngineCpuFigure {
  readonly tenants: number
  readonly commands: number
  /** CPU of this process (engine, log writer thread, HTTP client) per command, from submit to outcome. */
  readonly engineMicrosPerCommand: number
  /** Of which the main thread's (the engine's fibers, the HTTP client); the rest is the log's writer thread and the collector's helpers. */
  readonly mainThreadMicrosPerCommand: number
  readonly commandsPerSecond: number
}

/**
 * Engine CPU per command when the budget is not the bound (a budget far above the load): many
 * tenants' product.edit commands submitted by 256 callers at once, each waited for until
 * confirmed. `engineCpuSeconds` of the budget rows includes the waits; this is the engine alone.
 */
export const runEngineCpu = async (tenantCount: number, count: number): Promise<EngineCpuFigure> => {
  const sim = await startSim(["--no-rate-limit"])
  try {
    const s = await setup(sim.url, tenantCount)
    const started = performance.now()
    const micros = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const e = yield* CommandEngine
      const from = cpuMicros()
      const mainFrom = threadMicros()
      yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) => {
        const t = s.tenants[i % s.tenants.length]!
        return e.submit({ tenant: t, kind: "product.edit", payload: { id: t.productId, price: 3000 + i }, requestedBy: admin, idempotencyKey: `e-${i}` }).pipe(
          Effect.flatMap((x) => e.outcome(t, x.command.id))
        )
      }, { concurrency: SUBMITTERS, discard: true })
      return { all: cpuMicros() - from, main: threadMicros() - mainFrom }
    }).pipe(Effect.provide(stack(s, s.tenants, { overrides: UNBOUNDED })))))
    return {
      tenants: tenantCount,
      commands: count,
      engineMicrosPerCommand: micros.all / count,
      mainThreadMicrosPerCommand: micros.main / count,
      commandsPerSecond: count / ((performance.now() - started) / 1000) }
  } finally {
    sim.stop()
  }
}

export interface CommandsBenchResult {
  readonly name: "commands"
  readonly budgetOne: BudgetFigure
  readonly budgetMany: BudgetFigure
  readonly coalescing: CoalescingFigure
  readonly cpu: CpuFigure
  readonly engine: EngineCpuFigure
}

export const runCommandsBench = async (options: { readonly quick?: boolean } = {}): Promise<CommandsBenchResult> => {
  const quick = options.quick === true
  // --quick stays small: shorter spans and 20 tenants instead of 1,000.
  const budgetOne = await runBudget(1, 20, 2, quick ? 2 : 5)
  // 1,000 tenants, 3 calls per 15 s a key (200 a second in all), two windows measured: the second
  // window's calls wait for their key's budget, which is where slots held through that wait
  // starved the lanes. At 10 per 10 s (1,000 a second) the engine's CPU, not the write lanes,
  // is the limit on a 2-core machine (docs/architecture.md §4.31).
  const budgetMany = quick ? await runBudget(20, 10, 5, 1) : await runBudget(1000, 3, 15, 2)
  const coalescing = await runCoalescing(quick ? 500 : 5000)
  const cpu = await runCpu(quick ? 150 : 2000)
  // The engine alone at 1,000 tenants (20 with --quick), the budget not the bound.
  const engine = quick ? await runEngineCpu(20, 1000) : await runEngineCpu(1000, 10_000)
  return { name: "commands", budgetOne, budgetMany, coalescing, cpu, engine }
}

if (import.meta.main && process.argv.includes("--budget")) {
  // One budget row alone (profiling): --budget <tenants> <limit> <windowSeconds> <measuredWindows>
  const [n, limit, w, m] = process.argv.slice(process.argv.indexOf("--budget") + 1).map(Number)
  console.log(JSON.stringify(await runBudget(n!, limit!, w!, m!), null, 2))
} else if (import.meta.main) {
  const result = await runCommandsBench({ quick: process.argv.includes("--quick") })
  console.log(JSON.stringify(result, null, 2))
}
