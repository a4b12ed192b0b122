/**
 * The simulator as a running HTTP server: one `node:http` server for both service families
 * (POS under `posBasePath`, Vpage under `vpageBasePath`) and the control API under `/_sim`.
 * The hot path is plain Node for throughput; the lifecycle is an Effect resource (closes
 * when its scope ends), with a Promise helper for non-Effect callers.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import * as Api from "./Api.ts"
import * as Control from "./Control.ts"
import * as Grant from "./Grant.ts"
import { notFound, readBody, send } from "./internal/Http.ts"
import type { Family } from "./Operations.ts"
import { SimulatorControl } from "./SimulatorControl.ts"
import { DEFAULT_PORT, type DemoInfo, type SimulatorOptions, World } from "./World.ts"

export type { DemoInfo, SimulatorOptions }

export interface SimulatorHandle {
  /** Root URL, e.g. http://127.0.0.1:8788 (control API at `${url}/_sim`). */
  readonly url: string
  readonly host: string
  readonly port: number
  readonly posBaseUrl: string
  readonly vpageBaseUrl: string
  /** The demo tenant, unless started with `demo: false`. */
  readonly demo: DemoInfo | undefined
  /** A control client bound to this simulator. */
  readonly control: SimulatorControl
}

export interface RunningSimulator extends SimulatorHandle {
  readonly close: () => Promise<void>
}

export class SimulatorStartError extends Schema.TaggedError<SimulatorStartError>()("SimulatorStartError", {
  message: Schema.String
}) {}

/** Service giving access to a running simulator (see `layer`). */
export class Simulator extends Context.Service<Simulator, SimulatorHandle>()("@ocs/simulator/Simulator") {}

const DEFAULT_MAX_BODY = 8 * 1024 * 1024

const listener = (world: World, bases: ReadonlyArray<readonly [string, Family]>, maxBody: number) =>
(req: Http.IncomingMessage, res: Http.ServerResponse): void => {
  const url = req.url ?? "/"
  const q = url.indexOf("?")
  const path = q === -1 ? url : url.slice(0, q)
  const query = q === -1 ? "" : url.slice(q + 1)
  readBody(req, maxBody).then((body) => {
    if (path === "/_sim" || path.startsWith("/_sim/")) return Control.handle(world, req, res, path, query, body)
    if (path === "/oauth") return Grant.handlePage(world, req, res, query, body)
    for (const [base, family] of bases) {
      if (path.startsWith(base) && path.charCodeAt(base.length) === 0x2f && path.charCodeAt(base.length + 1) === 0x76) {
        const rest = path.slice(base.length + 2)
        const slash = rest.indexOf("/")
        if (slash > 0) {
          if (family === "pos" && rest.slice(slash + 1) === "app/getaccesstoken") {
            return Grant.handleExchange(world, req, res, rest.slice(0, slash), path, query, body)
          }
          return Api.handle(world.env, req, res, family, rest.slice(0, slash), rest.slice(slash + 1), path, query, body)
        }
      }
    }
    const answer = notFound(world.env.settings.strict, `no route ${path}`)
    send(res, 404, answer.body, answer.contentType)
  }).catch((error: unknown) => {
    send(res, 500, JSON.stringify({ error: error instanceof Error ? error.message : String(error) }))
  })
}

const normaliseBase = (path: string | undefined, fallback: string): string => {
  const p = path ?? fallback
  return p === "" || p === "/" ? "" : "/" + p.replace(/^\/+|\/+$/g, "")
}

/** Starts a simulator; resolves once it listens. */
export const startSimulator = async (options: SimulatorOptions = {}): Promise<RunningSimulator> => {
  const world = new World(options)
  const host = options.host ?? "127.0.0.1"
  const posBase = normaliseBase(options.posBasePath, "/pos")
  const vpageBase = normaliseBase(options.vpageBasePath, "/vpage")
  if (posBase === vpageBase) throw new Error("posBasePath and vpageBasePath must differ")
  // Longest prefix first, so "/pos" never captures "/pos2/..."
  const bases: Array<readonly [string, Family]> = [[posBase, "pos"] as const, [vpageBase, "vpage"] as const]
    .sort((a, b) => b[0].length - a[0].length)
  const server = Http.createServer({ keepAliveTimeout: 30_000 }, listener(world, bases, options.maxBodyBytes ?? DEFAULT_MAX_BODY))
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? DEFAULT_PORT, host, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`
  world.url = url
  world.posBaseUrl = url + posBase
  world.vpageBaseUrl = url + vpageBase
  let closing: Promise<void> | undefined
  return {
    url,
    host,
    port,
    posBaseUrl: world.posBaseUrl,
    vpageBaseUrl: world.vpageBaseUrl,
    get demo() {
      return world.demoInfo()
    },
    control: new SimulatorControl(url),
    close: () =>
      closing ??= new Promise<void>((resolve) => {
        world.close()
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

/** Starts a simulator in the current scope; it stops when the scope closes. */
export const start = (options: SimulatorOptions = {}): Effect.Effect<SimulatorHandle, SimulatorStartError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => startSimulator(options),
      catch: (cause) => new SimulatorStartError({ message: `simulator did not start: ${cause instanceof Error ? cause.message : String(cause)}` })
    }),
    (running) => Effect.promise(() => running.close())
  )

/** A layer providing `Simulator` (a fresh simulator, stopped when the layer is released). */
export const layer = (options: SimulatorOptions = {}): Layer.Layer<Simulator, SimulatorStartError> =>
  Layer.effect(Simulator, start(options))
