/**
 * The tenant registry shared by several servers on one Kafka cluster (docs/architecture.md
 * §4.19): applications (verify tokens), businesses (access tokens, permissions, depots) and
 * their status and sync settings. A replicating adapter of the registry (./TenantRegistry.ts),
 * on the same shared table as SharedSyncState (./SharedTable.ts):
 * each change made here (admin API, configuration seed, the sync engine putting a tenant on
 * hold) is written locally, then to the compacted topic `<topic>-tenants`; every server follows
 * that topic into its own store, so the admin API of any server changes the registry of all.
 *
 * Secrets stay sealed on the topic: tokens travel as the store seals them (AES-256-GCM with the
 * encryption key), so the servers of one cluster must share `OCS_ENCRYPTION_KEY`; a value that
 * this server's key cannot open is refused and logged, never stored.
 *
 * Keys: `app:<appId>`, `business:<appId>:<businessId>`, `status:<appId>:<businessId>`,
 * `settings:<appId>:<businessId>` (the tenant's sync settings); a
 * removal is a value with `removed: true` (a later value for the key supersedes it). Changes
 * to one key are ordered by (time, origin, sequence); a business change first by its grant's
 * generation (`gen`, below).
 *
 * Grants are ordered by the token's issue time, not by arrival (docs/architecture.md §4.32): a
 * business change carries `gen`, its `grantedAt` (a token written without one: the time it was
 * first written here, or the generation already held when the token is the same). A token
 * check on one server can answer about the old token while a grant is made on another, and
 * write the old token back after the grant; that write has the old generation, so it loses to
 * the grant on every server whatever its arrival, and a server that already holds the grant
 * drops it before writing.
 */
import { Clock, Effect, Layer, Option, Redacted, Result, Schema, Semaphore } from "effect"
import type { CompactedTopic } from "@ocs/event-log"
import { Ids } from "@ocs/protocol"
import { TenantSettings } from "@ocs/sync"
import type { Sealer } from "./Secrets.ts"
import { type AppConnect, type BusinessInput, type BusinessStatus, TenantRegistry } from "./TenantRegistry.ts"
import * as SharedTable from "./SharedTable.ts"

export interface Options {
  readonly brokers: ReadonlyArray<string>
  /** The compacted topic (created when absent). */
  readonly topic: string
  readonly partitions?: number | undefined
  readonly clientId?: string | undefined
  /** The store's sealer: tokens go to the topic sealed with it and are opened with it. */
  readonly sealer: Sealer
}

const Nullable = <S extends Schema.Top>(s: S) => Schema.NullOr(s)
const Stamp = { v: Schema.Literal(1), origin: Schema.String, seq: Schema.Number, at: Schema.Number }
const Change = Schema.Union([
  Schema.Struct({
    ...Stamp,
    kind: Schema.Literal("app"),
    appId: Schema.String,
    removed: Schema.Boolean,
    verifyTokens: Nullable(Schema.String),
    enabled: Schema.Boolean,
    // The grant flow's secret key (sealed) and public URL; absent on changes written before them.
    secretKey: Schema.optional(Nullable(Schema.String)),
    publicUrl: Schema.optional(Nullable(Schema.String))
  }),
  Schema.Struct({
    ...Stamp,
    kind: Schema.Literal("business"),
    appId: Schema.String,
    businessId: Schema.String,
    removed: Schema.Boolean,
    accessToken: Nullable(Schema.String),
    version: Nullable(Schema.String),
    permissions: Schema.Array(Schema.String),
    depots: Schema.Array(Schema.String),
    pages: Schema.optional(Schema.Array(Schema.String)),
    grantedAt: Nullable(Schema.Number),
    expiresAt: Nullable(Schema.Number),
    // The grant's generation (absent on changes written before it: 0, any grant outranks them).
    gen: Schema.optional(Schema.Number)
  }),
  Schema.Struct({
    ...Stamp,
    kind: Schema.Literal("status"),
    appId: Schema.String,
    businessId: Schema.String,
    status: Schema.Literals(["active", "paused", "attention"]),
    attention: Nullable(Schema.Struct({ code: Schema.String, message: Schema.String }))
  }),
  // The tenant's own sync settings (@ocs/sync TenantSettings), checked again on arrival.
  Schema.Struct({ ...Stamp, kind: Schema.Literal("settings"), appId: Schema.String, businessId: Schema.String, settings: TenantSettings.TenantSettings })
])
type Change = typeof Change.Type
const decodeChange = Schema.decodeUnknownResult(Schema.fromJsonString(Change))

const keyOf = (c: { readonly kind: string; readonly appId: string; readonly businessId?: string }) =>
  c.kind === "app" ? `app:${c.appId}` : `${c.kind}:${c.appId}:${c.businessId}`

/** `TenantRegistry` shared through `options.topic`; needs the local registry. */
export const layer = (options: Options): Layer.Layer<TenantRegistry, CompactedTopic.SharedStateUnavailable, TenantRegistry> =>
  Layer.effect(TenantRegistry, make(options))

export const make = Effect.fnUntraced(function*(options: Options) {
  const local = yield* TenantRegistry

  /** The plain text of a sealed value, or undefined when this server's key cannot open it. */
  const open = (sealed: string | null): string | undefined => {
    if (sealed === null) return undefined
    const opened = options.sealer.open(sealed)
    return Result.isSuccess(opened) ? Redacted.value(opened.success) : undefined
  }

  /**
   * Changes that arrived before what they belong to: the topic's keys fall on different
   * partitions, so a business can come before its application, or a status or settings before
   * their business. Each waits here (the newest per key) until its parent is applied.
   */
  const waiting = new Map<string, Map<string, Change>>()
  const parentOf = (c: Change): string | undefined =>
    c.kind === "app" ? undefined : c.kind === "business" ? `app:${c.appId}` : `business:${c.appId}:${c.businessId}`
  const park = (parent: string, c: Change) => {
    let held = waiting.get(parent)
    if (held === undefined) waiting.set(parent, held = new Map())
    held.set(keyOf(c), c)
  }
  const parentPresent = (c: Change) =>
    c.kind === "app" ? Effect.succeed(true)
    : c.kind === "business" ? Effect.map(local.app(c.appId), Option.isSome)
    : Effect.map(local.business(c.appId, c.businessId), Option.isSome)
  /** Applies what waited for `parent`, once it is there. */
  const release = (parent: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const held = waiting.get(parent)
      if (held === undefined) return Effect.void
      waiting.delete(parent)
      return Effect.forEach(held.values(), applyRemote, { discard: true })
    })

  const applyChange = (c: Change) =>
    Effect.gen(function*() {
      switch (c.kind) {
        case "app": {
          if (c.removed) return void (yield* local.removeApp(c.appId))
          const tokens = open(c.verifyTokens)
          if (tokens === undefined) return yield* Effect.logError(`shared tenants: app ${c.appId}: verify tokens cannot be opened with this server's key; not applied`)
          return yield* local.upsertApp(c.appId, JSON.parse(tokens) as ReadonlyArray<string>, c.enabled, {
            secretKey: open(c.secretKey ?? null),
            publicUrl: c.publicUrl ?? undefined
          })
        }
        case "business": {
          if (c.removed) return void (yield* local.removeBusiness(c.appId, c.businessId))
          const accessToken = open(c.accessToken)
          if (accessToken === undefined) return yield* Effect.logError(`shared tenants: business ${Ids.tenantKey(c)}: access token cannot be opened with this server's key; not applied`)
          return yield* local.upsertBusiness({
            appId: c.appId,
            businessId: c.businessId,
            accessToken,
            version: c.version ?? undefined,
            permissions: c.permissions,
            depots: c.depots,
            pages: c.pages,
            grantedAt: c.grantedAt,
            expiresAt: c.expiresAt
          })
        }
        case "status":
          return void (yield* local.setStatus(c.appId, c.businessId, c.status, c.attention ?? undefined))
        case "settings":
          return void (yield* local.setSettings(c.appId, c.businessId, c.settings))
      }
    })

  /**
   * Business writes, here and from the topic, one at a time: a write made here checks the
   * generation held, writes and takes its stamp with no remote grant written in between.
   */
  const businessWrites = Semaphore.makeUnsafe(1)

  const applyRemote = (c: Change): Effect.Effect<void> =>
    Effect.gen(function*() {
      const parent = parentOf(c)
      const removal = (c.kind === "app" || c.kind === "business") && c.removed
      if (parent !== undefined && !removal && !(yield* parentPresent(c))) return park(parent, c)
      if (removal) {
        waiting.get(parent ?? "")?.delete(keyOf(c))
        waiting.delete(keyOf(c))
      }
      // The table held `c` as the newest of its key when it arrived; a write made here while it
      // waited for the permit (a grant, say) may have replaced it since: then it is not applied.
      yield* (c.kind === "business" ? businessWrites.withPermit(Effect.suspend(() => stillNewest(c) ? applyChange(c) : Effect.logDebug(`shared tenants: ${keyOf(c)}: a change overtaken by a write made here was not applied`))) : applyChange(c))
      if (!removal && (c.kind === "app" || c.kind === "business")) yield* release(keyOf(c))
    }).pipe(Effect.catchTag("TenantStoreError", (e) => Effect.logWarning(`shared tenants: ${keyOf(c)} not applied: ${e.message}`)))

  let started = false
  // Before the table exists (its start reads what the topic holds) no write is made here.
  let tableReady: SharedTable.SharedTable | undefined
  const stillNewest = (c: Change) => tableReady === undefined || tableReady.isNewest(keyOf(c), c)
  const table = yield* SharedTable.make<Change>({
    brokers: options.brokers,
    topic: options.topic,
    partitions: options.partitions,
    clientId: options.clientId ?? "ocs-tenants",
    label: "shared tenants",
    decode: decodeChange,
    orderKey: keyOf,
    onRemote: applyRemote,
    // An older grant published after a newer one (by a server that had not seen it yet) would
    // be the compacted topic's last value for the key: the newer one is published again.
    // Not while the topic is read before the start (each server would publish it again).
    onStale: (c) => started && c.kind === "business" && !c.removed ? republish(c.appId, c.businessId) : Effect.void
  })

  /** This server's business as held, published again with the generation held for it. */
  const republish = (appId: string, businessId: string): Effect.Effect<void> =>
    Effect.gen(function*() {
      const key = keyOf({ kind: "business", appId, businessId })
      const change = yield* businessWrites.withPermit(Effect.gen(function*() {
        const b = yield* local.business(appId, businessId)
        if (Option.isNone(b)) return undefined
        const t = b.value
        return yield* stamped({
          kind: "business",
          appId,
          businessId,
          removed: false,
          accessToken: options.sealer.seal(Redacted.value(t.accessToken)),
          version: t.version,
          permissions: [...t.permissions],
          depots: [...t.depots],
          pages: [...t.pages],
          grantedAt: t.grantedAt,
          expiresAt: t.expiresAt
        }, table.generation(key))
      }))
      if (change !== undefined) yield* send(change)
    }).pipe(Effect.catchTag("TenantStoreError", (e) => Effect.logWarning(`shared tenants: business:${appId}:${businessId} not published again: ${e.message}`)))

  type Body = Change extends infer C ? C extends Change ? Omit<C, "v" | "origin" | "seq" | "at" | "gen"> : never : never
  const stamped = (body: Body, gen?: number) => Effect.map(table.stamp(keyOf(body), gen), (stamp) => ({ ...stamp, ...body }) as Change)
  const send = (change: Change) => table.publish(keyOf(change), change, "the change stays on this server")
  const publish = (body: Body, gen?: number) => Effect.flatMap(stamped(body, gen), send)

  /** The generation of a business write: its grant time; for a token without one, see the header. */
  const generationOf = (input: BusinessInput) =>
    Effect.gen(function*() {
      if (input.grantedAt !== undefined && input.grantedAt !== null) return input.grantedAt
      const key = keyOf({ kind: "business", appId: input.appId, businessId: input.businessId })
      const stored = yield* local.business(input.appId, input.businessId)
      return Option.isSome(stored) && Redacted.value(stored.value.accessToken) === input.accessToken
        ? table.generation(key)
        : yield* Clock.currentTimeMillis
    })

  tableReady = table
  started = true
  return TenantRegistry.of({
    // Reads, and what only this server records (its webhooks' times), stay local.
    isRegistered: local.isRegistered,
    app: local.app,
    appCached: local.appCached,
    apps: local.apps,
    business: local.business,
    businesses: local.businesses,
    touchWebhook: local.touchWebhook,
    upsertApp: (appId: string, verifyTokens: ReadonlyArray<string>, enabled = true, connect?: AppConnect) =>
      Effect.gen(function*() {
        yield* local.upsertApp(appId, verifyTokens, enabled, connect)
        // The topic is compacted (the latest record per app wins): it carries the app as stored,
        // with the secret key and URL an upsert that did not name them kept.
        const stored = Option.getOrUndefined(yield* local.app(appId))
        yield* publish({
          kind: "app",
          appId,
          removed: false,
          verifyTokens: options.sealer.seal(JSON.stringify(verifyTokens)),
          enabled,
          secretKey: stored === undefined || stored.secretKey === null ? null : options.sealer.seal(Redacted.value(stored.secretKey)),
          publicUrl: stored?.publicUrl ?? null
        })
      }),
    removeApp: (appId: string) =>
      Effect.tap(local.removeApp(appId), () => publish({ kind: "app", appId, removed: true, verifyTokens: null, enabled: false })),
    upsertBusiness: (input: BusinessInput) =>
      Effect.gen(function*() {
        const key = keyOf({ kind: "business", appId: input.appId, businessId: input.businessId })
        const change = yield* businessWrites.withPermit(Effect.gen(function*() {
          const gen = yield* generationOf(input)
          // An older grant than the one held (a token check's write-back racing a grant made
          // on another server) never goes back over it.
          if (gen < table.generation(key)) return undefined
          yield* local.upsertBusiness(input)
          return yield* stamped({
            kind: "business",
            appId: input.appId,
            businessId: input.businessId,
            removed: false,
            accessToken: options.sealer.seal(input.accessToken),
            version: input.version ?? null,
            permissions: [...(input.permissions ?? [])],
            depots: [...(input.depots ?? [])],
            pages: [...(input.pages ?? [])],
            grantedAt: input.grantedAt ?? null,
            expiresAt: input.expiresAt ?? null
          }, gen)
        }))
        if (change === undefined) return yield* Effect.logDebug(`shared tenants: ${key}: a write of an older grant than the one held was dropped`)
        // A newer grant arrived between the write and now: it is the last word here already,
        // and this change must not be the topic's last value for the key.
        if (table.isNewest(key, change)) yield* send(change)
      }),
    // A removal outranks the grants made before it and loses to those made after it.
    removeBusiness: (appId: string, businessId: string) =>
      Effect.gen(function*() {
        const { removed, change } = yield* businessWrites.withPermit(Effect.gen(function*() {
          const removed = yield* local.removeBusiness(appId, businessId)
          const change = yield* stamped(
            { kind: "business", appId, businessId, removed: true, accessToken: null, version: null, permissions: [], depots: [], grantedAt: null, expiresAt: null },
            yield* Clock.currentTimeMillis
          )
          return { removed, change }
        }))
        yield* send(change)
        return removed
      }),
    setStatus: (appId: string, businessId: string, status: BusinessStatus, attention?: { readonly code: string; readonly message: string }) =>
      Effect.tap(local.setStatus(appId, businessId, status, attention), () =>
        publish({ kind: "status", appId, businessId, status, attention: attention ?? null })),
    setSettings: (appId: string, businessId: string, settings: TenantSettings.TenantSettings) =>
      Effect.tap(local.setSettings(appId, businessId, settings), (found) =>
        found ? publish({ kind: "settings", appId, businessId, settings }) : Effect.void)
  })
})
