/**
 * The setup every reliability file shares: a simulator process and its control client, the
 * tenants a file creates in it, servers over fresh data folders, and the cleanup after the
 * file (servers SIGKILLed, the simulator stopped, every folder removed). A test file calls
 * `reliabilitySuite` once at its top and keeps to what it tests.
 *
 * Hooks a file adds after this call run their `afterAll` before the suite's (vitest runs
 * after-hooks as a stack); ones added before it run after.
 */
import { afterAll, beforeAll } from "vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { SimulatorControl } from "@ocs/simulator"
import { type Listening, startSimulatorProcess, tempDir } from "@ocs/testkit/Processes"
import { ServerHandle, serverConfig, type ServerConfigOptions, type Tenant } from "./harness.ts"

export interface SuiteOptions {
  /** Flags of the simulator process (`ocs-simulator`); `--port 0` is always given. */
  readonly simFlags?: ReadonlyArray<string>
  /** Runs once the simulator is up (tenants, faults, a server the whole file uses). */
  readonly setup?: (suite: Suite) => Promise<void>
  /** Timeout of the whole setup, simulator start included. */
  readonly setupTimeoutMs?: number
}

export interface Suite {
  /** The simulator process (set before `setup` runs). */
  readonly sim: Listening
  readonly control: SimulatorControl
  /** A tenant in the simulator: app, business with seeded data, token. */
  readonly tenant: (input?: Parameters<SimulatorControl["createTenant"]>[0]) => Promise<Tenant>
  /** A fresh folder in the OS temp dir, removed after the file. */
  readonly folder: (prefix: string) => string
  /**
   * A server over `<fresh folder>/data`, configured by `serverConfig` against this simulator
   * (not started yet); SIGKILLed after the file if still running.
   */
  readonly server: (prefix: string, options: Omit<ServerConfigOptions, "simUrl" | "dataDir">) => ServerHandle
}

export const reliabilitySuite = (options: SuiteOptions = {}): Suite => {
  let sim: Listening | undefined
  let control: SimulatorControl | undefined
  const folders: Array<string> = []
  const servers: Array<ServerHandle> = []
  const started = <A>(value: A | undefined, what: string): A => {
    if (value === undefined) throw new Error(`${what} is not started yet (use it inside a hook or a test)`)
    return value
  }
  const suite: Suite = {
    get sim() {
      return started(sim, "the simulator")
    },
    get control() {
      return started(control, "the simulator")
    },
    tenant: async (input) => {
      const x = await suite.control.createTenant(input)
      return { appId: x.app.appId, businessId: x.business.businessId, accessToken: x.token.accessToken, verifyToken: x.app.verifyToken }
    },
    folder: (prefix) => {
      const dir = tempDir(prefix)
      folders.push(dir)
      return dir
    },
    server: (prefix, config) => {
      const root = suite.folder(prefix)
      const handle = new ServerHandle(serverConfig({ ...config, simUrl: suite.sim.url, dataDir: Path.join(root, "data") }), root)
      servers.push(handle)
      return handle
    }
  }

  beforeAll(async () => {
    sim = await startSimulatorProcess(options.simFlags ?? [])
    control = new SimulatorControl(sim.url)
    await options.setup?.(suite)
  }, options.setupTimeoutMs)

  afterAll(async () => {
    for (const server of servers) await server.kill()
    await sim?.proc.stop("SIGKILL")
    for (const dir of folders) Fs.rmSync(dir, { recursive: true, force: true })
  })

  return suite
}

/** The simulator most files want: 5 products a business, rate windows of 3 seconds. */
export const smallSimulator: ReadonlyArray<string> = ["--rate-window", "3", "--products", "5"]

/** A file's one server and its one tenant; read them inside a hook or a test. */
export interface OneServer {
  readonly suite: Suite
  readonly tenant: Tenant
  readonly server: ServerHandle
}

/**
 * The suite of a file that tests one server over one small tenant (5 products, no orders) on
 * the small simulator: the tenant made and the server started in the setup. `prepare` runs
 * before the start (to leave a data folder as an operator might have).
 */
export const oneServerSuite = (
  prefix: string,
  options: { readonly extra?: ServerConfigOptions["extra"]; readonly prepare?: (server: ServerHandle) => void } = {}
): OneServer => {
  let tenant: Tenant | undefined
  let server: ServerHandle | undefined
  const suite = reliabilitySuite({
    simFlags: smallSimulator,
    setup: async (s) => {
      tenant = await s.tenant({ products: 5, orders: 0 })
      server = s.server(prefix, { tenants: [tenant], ...(options.extra === undefined ? {} : { extra: options.extra }) })
      options.prepare?.(server)
      await server.start()
    }
  })
  return {
    suite,
    get tenant() {
      if (tenant === undefined) throw new Error("the tenant is made in the suite's setup (use it inside a hook or a test)")
      return tenant
    },
    get server() {
      if (server === undefined) throw new Error("the server is started in the suite's setup (use it inside a hook or a test)")
      return server
    }
  }
}
