/**
 * Which applications receive webhooks here, and the verify tokens each accepts.
 *
 * The receiver asks once per delivery, synchronously: `lookup` answers from a view kept in
 * memory (the sync server's cache of its tenant store; `makeMemory` here), so no effect runs
 * on the request path. Several tokens may be valid at once so that a token can be rotated
 * without losing deliveries: add the new token, change it in the application settings, remove
 * the old one.
 */
import { Context, Layer, Option, Result, Schema } from "effect"

export interface WebhookApp {
  /** Canonical digit string, as in the callback path `/webhooks/<appId>`. */
  readonly appId: string
  /** docs/api-catalogue.md, Authentication 8: the `webhooksVerifyToken` values currently accepted. */
  readonly verifyTokens: ReadonlyArray<string>
  /** A disabled application is answered as unknown (404) and nothing is stored. */
  readonly enabled: boolean
}

/** The lookup could not be answered (tenant store down): the receiver answers 503. */
export class WebhookAppsUnavailable extends Schema.TaggedError<WebhookAppsUnavailable>()("WebhookAppsUnavailable", {
  message: Schema.String
}) {}

export interface WebhookAppsService {
  /**
   * The application of a delivery, from memory: `None` when unknown, a failure when the view
   * cannot answer (the receiver answers 503 and the service delivers again). Never throws.
   */
  readonly lookup: (appId: string) => Result.Result<Option.Option<WebhookApp>, WebhookAppsUnavailable>
}

export class WebhookApps extends Context.Service<WebhookApps, WebhookAppsService>()("@ocs/ingestion/WebhookApps") {
  /** A fixed in-memory configuration. Use `makeMemory` when the test or caller changes it. */
  static readonly layerMemory = (apps: ReadonlyArray<WebhookApp>): Layer.Layer<WebhookApps> =>
    Layer.sync(WebhookApps, () => makeMemory(apps))
}

/** An in-memory store that can be changed while the receiver runs (rotation, disabling). */
export interface MemoryApps extends WebhookAppsService {
  readonly set: (app: WebhookApp) => void
  readonly remove: (appId: string) => void
}

export const makeMemory = (apps: ReadonlyArray<WebhookApp> = []): MemoryApps => {
  const byId = new Map<string, WebhookApp>()
  for (const app of apps) byId.set(app.appId, app)
  return {
    lookup: (appId) => Result.succeed(Option.fromUndefinedOr(byId.get(appId))),
    set: (app) => {
      byId.set(app.appId, app)
    },
    remove: (appId) => {
      byId.delete(appId)
    }
  }
}
