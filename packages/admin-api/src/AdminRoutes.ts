/**
 * The admin API as a reference: every route the sync server registers, its parameters, its
 * body (the same Schema the route decodes it with, ./AdminInputs.ts), its answer and its
 * errors. From it come the OpenAPI 3.1 document served at `GET /admin/openapi.json` and
 * `docs/admin-api.md` (./AdminDocs.ts). The server's test compares it with the routes its
 * router holds, both ways, and the file with what AdminDocs writes, so neither can drift.
 */
import { Schema } from "effect"
import { TenantSettings } from "@ocs/sync"
import { AppInput, SignIn, TenantInput } from "./AdminInputs.ts"

export type Method = "GET" | "POST" | "PUT" | "DELETE"

/** A route as the router holds it: `GET /admin/tenants/:appId/:businessId`. */
export interface RouteKey {
  readonly method: string
  readonly path: string
}

export interface Param {
  readonly name: string
  readonly type: "integer" | "string" | "boolean"
  readonly description: string
}

export interface RouteDoc extends RouteKey {
  readonly method: Method
  readonly group: string
  readonly summary: string
  /** `admin`: the admin key or a console session (actions: same origin + CSRF token). */
  readonly auth: "admin" | "none"
  readonly query?: ReadonlyArray<Param>
  readonly body?: Schema.Top
  /** What a body field means, where its name does not say it. */
  readonly bodyNotes?: Readonly<Record<string, string>>
  readonly answer: { readonly status: number; readonly contentType?: string; readonly description: string }
  /** Beyond the common ones of its `auth` (401, 403, 500) and of a tenant path (400, 404). */
  readonly errors?: ReadonlyArray<readonly [number, string]>
}

/** The path of one tenant, under which its routes live. */
export const T = "/admin/tenants/:appId/:businessId"
const page: ReadonlyArray<Param> = [
  { name: "limit", type: "integer", description: "rows per page, 1..1000 (default 100)" },
  { name: "after", type: "string", description: "the `next` of the previous page (opaque)" }
]
const includeDeleted: Param = { name: "includeDeleted", type: "boolean", description: "also rows the source deleted (default false)" }
const tenantShape = "A tenant: `appId`, `businessId`, `status` (active, paused, attention), `attention` ({code, message, at} or null), `version`, `permissions`, `depots`, `grantedAt`, `expiresAt` (epoch ms or null), `expiresInDays`, `lastWebhookAt`, `webhookSilent`. Never its token."

const readModel = (path: string, what: string, query: ReadonlyArray<Param> = []): ReadonlyArray<RouteDoc> => [
  {
    method: "GET",
    path: `${T}/${path}`,
    group: "read models",
    summary: `The tenant's ${what}, a page at a time`,
    auth: "admin",
    query: [...page, ...query],
    answer: { status: 200, description: `\`{ items, next }\`: ${what} as stored, \`next\` null on the last page.` }
  },
  {
    method: "GET",
    path: `${T}/${path}/:id`,
    group: "read models",
    summary: `One of the tenant's ${what} by id`,
    auth: "admin",
    answer: { status: 200, description: `The record.` },
    errors: [[404, `no such record for this tenant`]]
  }
]
const readList = (path: string, what: string, query: ReadonlyArray<Param> = []): RouteDoc => ({
  method: "GET",
  path: `${T}/${path}`,
  group: "read models",
  summary: `The tenant's ${what}`,
  auth: "admin",
  query,
  answer: { status: 200, description: `\`{ items }\`: every ${what.replace(/s$/, "")} of the tenant.` }
})

export const routes: ReadonlyArray<RouteDoc> = [
  // Probes
  { method: "GET", path: "/healthz", group: "probes", summary: "The process answers", auth: "none", answer: { status: 200, description: "`{ status: \"ok\" }`" } },
  {
    method: "GET",
    path: "/readyz",
    group: "probes",
    summary: "The server takes traffic: listening, every loop up, the read models within their lag bounds",
    auth: "none",
    answer: { status: 200, description: "`{ status: \"ready\", lag: {records, seconds} | null, unrelayed? }` (`unrelayed`: Kafka mode's outbox backlog)." },
    errors: [[503, "`{ status: \"not ready\", error, loopsDown, lag }`: what is wrong, in words (or `{ error: \"starting\" }`)"]]
  },
  {
    method: "GET",
    path: "/metrics",
    group: "probes",
    summary: "Prometheus metrics (docs/operations.md lists each)",
    auth: "none",
    answer: { status: 200, contentType: "text/plain", description: "The Prometheus text format, version 0.0.4." }
  },
  {
    method: "GET",
    path: "/admin/openapi.json",
    group: "reference",
    summary: "This reference as an OpenAPI 3.1 document",
    auth: "admin",
    answer: { status: 200, description: "The document (import it into Postman or another client)." }
  },
  // Applications and tenants
  { method: "GET", path: "/admin/apps", group: "tenants", summary: "The applications", auth: "admin", answer: { status: 200, description: "`{ apps: [{ appId, enabled, connect (has a secret key), publicUrl }] }`" } },
  {
    method: "POST",
    path: "/admin/apps",
    group: "tenants",
    summary: "Registers an application or replaces its verify tokens (the webhooks' `Authorization` tokens)",
    auth: "admin",
    body: AppInput,
    bodyNotes: {
      appId: "the application's id (a positive integer, as a number or a string of digits)",
      verifyTokens: "the tokens webhooks of this application may carry; several while one is being replaced",
      enabled: "false stops accepting its webhooks (default true)",
      secretKey: "the application's secret key, for the grant flow (`GET /connect/<appId>`); sealed at rest, never returned; absent keeps the stored one",
      publicUrl: "this server's public base URL, on which the grant's return link is built; absent keeps the stored one"
    },
    answer: { status: 201, description: "`{ appId, verifyTokens (count), enabled, secretKey (whether one was given) }`" },
    errors: [[400, "a field at fault, with its path"], [413, "body larger than 64 KiB"]]
  },
  {
    method: "DELETE",
    path: "/admin/apps/:appId",
    group: "tenants",
    summary: "Removes an application and its tenants",
    auth: "admin",
    answer: { status: 200, description: "`{ removed: appId }`" },
    errors: [[400, "appId is not a positive integer"], [404, "no such application"]]
  },
  {
    method: "GET",
    path: "/admin/tenants",
    group: "tenants",
    summary: "The tenants (businesses), optionally of one application or one status",
    auth: "admin",
    query: [
      { name: "appId", type: "string", description: "only this application's" },
      { name: "status", type: "string", description: "active, paused or attention" }
    ],
    answer: { status: 200, description: `\`{ tenants: [...] }\`. ${tenantShape}` },
    errors: [[400, "a bad status or appId"]]
  },
  {
    method: "POST",
    path: "/admin/tenants",
    group: "tenants",
    summary: "Registers a business of an application, or posts its new grant (token, version, expiry); clears a hold",
    auth: "admin",
    body: TenantInput,
    bodyNotes: {
      appId: "an application registered with POST /admin/apps",
      businessId: "the business (a positive integer, as a number or a string of digits)",
      accessToken: "the token the grant gave (stored sealed, never returned)",
      version: "the API version of the grant (\"3.0\")",
      permissions: "what the grant allows, as the grant lists them",
      depots: "the depots the grant covers",
      pages: "the Vpage pages the grant covers",
      grantedAt: "when the grant was given: YYYY-MM-DD..., or epoch ms",
      expiresAt: "when the token stops working (the grant's expiredAt; a year after it was given): YYYY-MM-DD..., or epoch ms. Without it no expiry warnings are given, and the answer says so",
      settings: "this tenant's own sync settings, as PUT .../settings takes them"
    },
    answer: {
      status: 201,
      description:
        `The tenant as \`GET /admin/tenants\` shows it, \`released\` (its quarantined webhooks now projected) and \`warnings\`: e.g. no \`expiresAt\` (then no expiry warnings can be given) or an \`expiresAt\` in the past. Dates: \`YYYY-MM-DD...\` or epoch ms. \`settings\`: as \`PUT .../settings\`.`
    },
    errors: [[400, "a field at fault, with its path; an unknown resource in settings"], [409, "the application does not exist: POST /admin/apps first"], [413, "body larger than 64 KiB"]]
  },
  {
    method: "GET",
    path: T,
    group: "tenants",
    summary: "One tenant, its sync state per resource and its read models' row counts",
    auth: "admin",
    answer: { status: 200, description: `The tenant, \`sync\` (per resource: cursor, windows, last run, errors, pause) and \`counts\`.` }
  },
  {
    method: "DELETE",
    path: T,
    group: "tenants",
    summary: "Removes a tenant (its data stays in the log)",
    auth: "admin",
    answer: { status: 200, description: "`{ removed: \"appId:businessId\" }`" }
  },
  {
    method: "GET",
    path: `${T}/settings`,
    group: "tenants",
    summary: "The tenant's own sync settings and the resources it syncs",
    auth: "admin",
    answer: { status: 200, description: "`{ appId, businessId, settings, resources, notGranted }`: `resources` as synced (within the grant), `notGranted` those its grant leaves out (`{ resource, permission, fix }`), never pulled" }
  },
  {
    method: "PUT",
    path: `${T}/settings`,
    group: "tenants",
    summary: "Replaces the tenant's sync settings (absent fields keep the server's `sync` section)",
    auth: "admin",
    body: TenantSettings.TenantSettings,
    bodyNotes: {
      resources: "resources to sync, named as in the configuration's sync.resources (\"product/list\", \"order\")",
      intervalSeconds: "between incremental passes",
      reconcileSeconds: "between full reconciliation passes",
      gapFillSilenceSeconds: "after this long without a webhook, an incremental pull fills the gap",
      depots: "the depots the stock read asks for (default: every depot granted)",
      pages: "the page-service pages to read when the grant names none; with the grant's pages, those of them within it"
    },
    answer: { status: 200, description: "`{ appId, businessId, settings, resources }`: the resources as now synced." },
    errors: [[400, "unknown fields and bad values, each with its path; an unknown resource"], [413, "body larger than 64 KiB"]]
  },
  {
    method: "POST",
    path: `${T}/pause`,
    group: "tenants",
    summary: "Pauses the tenant's pulls (webhooks are still stored)",
    auth: "admin",
    answer: { status: 200, description: "`{ appId, businessId, status: \"paused\" }`" }
  },
  {
    method: "POST",
    path: `${T}/resume`,
    group: "tenants",
    summary: "Resumes the tenant's pulls",
    auth: "admin",
    answer: { status: 200, description: "`{ appId, businessId, status: \"active\" }`" }
  },
  {
    method: "POST",
    path: `${T}/sync`,
    group: "tenants",
    summary: "Syncs every resource of the tenant now, in order, and answers when done",
    auth: "admin",
    query: [{ name: "full", type: "boolean", description: "a full pass from the first page, whatever is stored (default false)" }],
    answer: {
      status: 200,
      description:
        "`{ appId, businessId, reports: [{ resource, mode, pages, records, outcome, error?, reason }] }`: per resource, `mode` full, resume, incremental or skipped; `outcome` done, attention, paused or error; `reason` why it was skipped or did not finish (paused tenant, tenant on hold, paused resource, another server owns it, not due), null when it ran."
    },
    errors: [[400, "full is not true or false"]]
  },
  {
    method: "GET",
    path: `${T}/history/:entityId`,
    group: "tenants",
    summary: "Every log record that touched one entity, oldest first, with its exact body and the events it gave",
    auth: "admin",
    query: [{ name: "limit", type: "integer", description: "the last N matches, 1..1000 (default 200)" }],
    answer: { status: 200, description: "`{ appId, businessId, entityId, matched, records: [{ offset, id, receivedAt, source, type, events, body }] }`" },
    errors: [[400, "entityId is not a positive integer"]]
  },
  // Read models
  ...readModel("products", "products", [{ name: "search", type: "string", description: "name, code, barcode or the application's product id contains" }, includeDeleted]),
  readList("inventory", "stock levels", [
    { name: "productId", type: "string", description: "one product" },
    { name: "depotId", type: "string", description: "one depot; empty: the products' totals" }
  ]),
  ...readModel("orders", "orders", [
    { name: "status", type: "string", description: "order status code" },
    { name: "saleChannel", type: "string", description: "sale channel code" },
    { name: "depotId", type: "string", description: "depot id" },
    { name: "customerMobile", type: "string", description: "customer mobile" },
    { name: "createdFromMs", type: "integer", description: "created at or after (epoch ms)" },
    { name: "createdToMs", type: "integer", description: "created at or before (epoch ms)" },
    { name: "updatedFromMs", type: "integer", description: "updated at or after (epoch ms)" },
    { name: "updatedToMs", type: "integer", description: "updated at or before (epoch ms)" },
    { name: "appOrderId", type: "string", description: "the application's own order id" },
    includeDeleted
  ]),
  ...readModel("bills", "bills", [
    { name: "type", type: "string", description: "bill type code" },
    { name: "depotId", type: "string", description: "depot id" },
    { name: "customerId", type: "string", description: "customer id" },
    { name: "fromDate", type: "string", description: "yyyy-mm-dd" },
    { name: "toDate", type: "string", description: "yyyy-mm-dd" },
    includeDeleted
  ]),
  ...readModel("customers", "customers", [
    { name: "search", type: "string", description: "name contains" },
    { name: "mobile", type: "string", description: "mobile" },
    includeDeleted
  ]),
  readList("depots", "depots"),
  readList("categories", "categories"),
  readList("brands", "brands"),
  {
    method: "GET",
    path: `${T}/payments`,
    group: "read models",
    summary: "The tenant's payments, a page at a time",
    auth: "admin",
    query: [...page, { name: "orderId", type: "string", description: "one order's" }],
    answer: { status: 200, description: "`{ items, next }`" }
  },
  // The page service (docs/api-catalogue.md §9): the pages the grant names, and what they hold.
  readList("vpage/pages", "page-service pages (the granted ones), each with when its access expires (`expiredAtMs`)"),
  readList("vpage/users", "page-service staff users"),
  readList("vpage/tags", "conversation tags, in the service's order"),
  ...readModel("vpage/conversations", "page-service conversations, the latest interaction first, with their last message and status", [
    { name: "pageId", type: "string", description: "one page's" },
    { name: "status", type: "string", description: "1 unread, 2 read" }
  ]),
  {
    method: "GET",
    path: `${T}/vpage/conversations/:id/messages`,
    group: "read models",
    summary: "One conversation's messages in the order they were written, a page at a time",
    auth: "admin",
    query: page,
    answer: { status: 200, description: "`{ items, next }`: each with `createdAtMs` (the service's ms time), sender, text and the record as received." }
  },
  {
    method: "GET",
    path: `${T}/vpage/customers`,
    group: "read models",
    summary: "The page service's customers, with their phones and emails, a page at a time",
    auth: "admin",
    query: [...page, { name: "pageId", type: "string", description: "one page's" }],
    answer: { status: 200, description: "`{ items, next }`: `phones` and `emails` as lists." }
  },
  {
    method: "GET",
    path: `${T}/documents/:kind`,
    group: "read models",
    summary: "Records of operations without a typed read model (`sync.resources` and `operations`), by kind",
    auth: "admin",
    query: page,
    answer: { status: 200, description: "`{ items, next }`: each with its id and exact body." }
  },
  {
    method: "GET",
    path: "/admin/quarantine",
    group: "tenants",
    summary: "Webhooks stored for businesses that are not registered (projected once they are)",
    auth: "admin",
    query: [{ name: "appId", type: "string", description: "one application's" }, { name: "limit", type: "integer", description: "latest records, 1..1000 (default 100)" }],
    answer: { status: 200, description: "Counts per business and the latest records." }
  },
  // Commands (the write path, docs/architecture.md §4.30)
  {
    method: "POST",
    path: `${T}/commands`,
    group: "tenants",
    summary: "Asks for a change on the service: a command with an Idempotency-Key header",
    auth: "admin",
    body: Schema.Struct({ kind: Schema.String, payload: Schema.Unknown }),
    bodyNotes: {
      kind: "product.add, product.edit, order.add, order.edit, customer.add, bill.addRetail, inventory.importSupplier, inventory.exportSupplier, inventory.importOther, inventory.exportOther",
      payload: "one entity, as the kind's operation takes it (docs/api-catalogue.md)"
    },
    answer: { status: 201, description: "The command: `id`, `kind`, `state` (pending, sending, inDoubt, confirmed, failed, cancelled), `attempts`, once known `entityId`, `lastAnswer` (exact body), `reason`, `evidence`, `confirmedBy` (answer, readBack, person), `seen` (copy, readBack, or flagged: the service does not show the effect). 200 with the same command when the key and payload repeat." },
    errors: [[400, "no Idempotency-Key; `issues`: each field at fault by its path"], [409, "the key names another payload's command (`commandId`)"], [413, "body larger than 256 KiB"], [422, "the copy shows the service would refuse it (an order handed to a carrier or finished): nothing stored or sent"]]
  },
  {
    method: "GET",
    path: `${T}/commands`,
    group: "tenants",
    summary: "The tenant's commands, newest first",
    auth: "admin",
    query: [
      { name: "state", type: "string", description: "pending, sending, inDoubt, confirmed, failed or cancelled" },
      { name: "kind", type: "string", description: "one kind's" },
      { name: "flagged", type: "boolean", description: "true: only confirmed commands whose effect the service does not show; false: none of them" },
      { name: "limit", type: "integer", description: "1..1000 (default 100)" }
    ],
    answer: { status: 200, description: "`{ items, total, counts }`: `counts` is the tenant's, whatever the filters: `byState` (every state, 0 included) and `flagged`." }
  },
  { method: "GET", path: `${T}/commands/:id`, group: "tenants", summary: "One command, with what was sent and answered", auth: "admin", answer: { status: 200, description: "The command." }, errors: [[404, "no such command for this tenant"]] },
  {
    method: "GET",
    path: `${T}/commands/:id/ledger`,
    group: "tenants",
    summary: "One command's transitions from the log, oldest first: each attempt, each answer's exact body, the evidence of a doubt, a person's decision",
    auth: "admin",
    answer: { status: 200, description: "`{ command, request, transitions }`: `request` is the operation and the body the command's kind sends for it (a coalesced call carries other commands' items too); each transition with its log `offset` and `at` (ms)." },
    errors: [[404, "no such command for this tenant"]]
  },
  {
    method: "POST",
    path: `${T}/commands/:id/retry`,
    group: "tenants",
    summary: "Sends an in-doubt command again (a person's decision: the effect may be doubled)",
    auth: "admin",
    answer: { status: 200, description: "The command, pending again." },
    errors: [[404, "no such command for this tenant"], [409, "the command is not in doubt"]]
  },
  {
    method: "POST",
    path: `${T}/commands/:id/cancel`,
    group: "tenants",
    summary: "Withdraws a command not sent yet (requested, waiting for its turn)",
    auth: "admin",
    answer: { status: 200, description: "The command, cancelled: it is never sent." },
    errors: [[404, "no such command for this tenant"], [409, "the command was sent already (or is final)"]]
  },
  {
    method: "POST",
    path: `${T}/commands/:id/mark-done`,
    group: "tenants",
    summary: "Marks an in-doubt command as having taken effect",
    auth: "admin",
    body: Schema.Struct({ entityId: Schema.optionalKey(Schema.String), note: Schema.optionalKey(Schema.String) }),
    answer: { status: 200, description: "The command, confirmed by a person." },
    errors: [[404, "no such command for this tenant"], [409, "the command is not in doubt"]]
  },
  {
    method: "GET",
    path: `${T}/id-map/:entity`,
    group: "tenants",
    summary: "The id map of `products` (appProductId) or `orders` (appOrderId): the application's keys and the service's ids, from the copy",
    auth: "admin",
    query: [
      { name: "key", type: "string", description: "keys to look up, repeated or comma-separated (at most 1000)" },
      { name: "id", type: "string", description: "ids to look up, repeated or comma-separated (at most 1000)" },
      ...page
    ],
    answer: { status: 200, description: "`{ items: [{ id, key, deleted }], next }`: the entries looked up, or a page by id without `key` and `id`." },
    errors: [[400, "more than 1000 keys or ids, or one longer than 255 characters"], [404, "the entity is neither products nor orders"]]
  },
  // Operations
  { method: "GET", path: "/admin/locks", group: "operations", summary: "Rate-limit keys locked now", auth: "admin", answer: { status: 200, description: "`{ locks: [...], keys (count) }`" } },
  { method: "GET", path: "/admin/budgets", group: "operations", summary: "Every rate-limit key and its budget", auth: "admin", answer: { status: 200, description: "`{ keys: [{ key, limit, recentCalls, lockedUntil? }] }`" } },
  {
    method: "GET",
    path: "/admin/errors",
    group: "operations",
    summary: "Recent API errors, newest first",
    auth: "admin",
    query: [{ name: "limit", type: "integer", description: "1..1000 (default 100)" }, { name: "appId", type: "string", description: "one application's" }],
    answer: { status: 200, description: "`{ errors: [{ appId, businessId, resource, tag, message, at }] }`" }
  },
  { method: "GET", path: "/admin/sync", group: "operations", summary: "Every tenant's sync state per resource", auth: "admin", answer: { status: 200, description: "`{ sync: [...] }`" } },
  { method: "GET", path: "/admin/ownership", group: "operations", summary: "Which tenants this server pulls (several servers on one topic)", auth: "admin", answer: { status: 200, description: "`{ mode: \"all\" }` or the partitions owned" } },
  { method: "GET", path: "/admin/plugins", group: "plugins", summary: "The plugins, their position in the log and their counters", auth: "admin", answer: { status: 200, description: "`{ plugins: [...] }`" } },
  {
    method: "GET",
    path: "/admin/plugins/dead-letters",
    group: "plugins",
    summary: "Events a plugin gave up on",
    auth: "admin",
    query: [{ name: "plugin", type: "string", description: "one plugin's" }],
    answer: { status: 200, description: "`{ deadLetters: [...] }`" }
  },
  {
    method: "POST",
    path: "/admin/plugins/redrive",
    group: "plugins",
    summary: "Gives dead letters back to their plugin: one by id, or a plugin's, or all",
    auth: "admin",
    query: [{ name: "id", type: "integer", description: "one dead letter" }, { name: "plugin", type: "string", description: "one plugin's" }],
    answer: { status: 200, description: "How many were redriven." }
  },
  // Kafka mode's relay
  {
    method: "GET",
    path: "/admin/relay",
    group: "operations",
    summary: "Kafka mode: the relay's status and the records it set aside as larger than the topic accepts",
    auth: "admin",
    answer: { status: 200, description: "`{ status: { up, failingSince, limitBytes, limitSource, ... }, deadLetters: [{ appId, businessId, offset, type, bytes, limit, reason, at }] }`" },
    errors: [[404, "the event log is not in Kafka mode"]]
  },
  {
    method: "POST",
    path: "/admin/relay/redrive",
    group: "operations",
    summary: "Kafka mode: reads the topic's limit again and relays every set-aside record that now fits",
    auth: "admin",
    answer: { status: 200, description: "`{ redriven, stillTooLarge }`" },
    errors: [[404, "the event log is not in Kafka mode"]]
  },
  // Console
  { method: "GET", path: "/admin/overview", group: "console", summary: "What the console shows at a glance (counters, not rates)", auth: "admin", answer: { status: 200, description: "`{ at, tenants, webhooks, sync, keys, loops, errors, plugins }`" } },
  {
    method: "GET",
    path: "/admin/series",
    group: "console",
    summary: "The server's activity over time, for the console's charts (sampled every 5 s, kept in memory)",
    auth: "admin",
    query: [{ name: "range", type: "string", description: "hour (10 s buckets) or day (1 min buckets); default hour" }],
    answer: {
      status: 200,
      description:
        "`{ range, at, sampleEveryMs, stepMs, start, series }`: `series` maps a name to one value per bucket, oldest first, the first bucket starting at `start` (epoch ms); null where no sample was taken. Counts per bucket: `accepted`, `duplicates`, `refused` (webhooks), `pages` (pulled), `calls`, `locks` (after ERR_429). Highest level in the bucket: `projectionLag` (records), `pluginLag:<name>` (records)."
    },
    errors: [[400, "an unknown range"]]
  },
  {
    method: "GET",
    path: `${T}/series`,
    group: "console",
    summary: "One tenant's activity over time: pages, records, calls and locks per bucket; its passes per resource and when the next is due",
    auth: "admin",
    query: [{ name: "range", type: "string", description: "hour (1 min buckets) or day (10 min buckets); default hour" }],
    answer: {
      status: 200,
      description:
        "`{ appId, businessId, range, at, stepMs, start, series, resources }` as `/admin/series`; `series` empty for a tenant idle since the server started (kept for the 1,000 most recently active tenants). `resources`: per resource `{ resource, passes: [{ at, pages, records }] (the last 30 seen since the server started), lastFullMs (the last full pass's duration or null), nextDueAt (epoch ms, or null while paused) }`."
    },
    errors: [[400, "an unknown range"]]
  },
  {
    method: "GET",
    path: "/admin/budgets/series",
    group: "console",
    summary: "Budget use per rate-limit key over the last hour (30 s buckets), the most recently active keys first",
    auth: "admin",
    answer: { status: 200, description: "`{ at, keys: [{ key, stepMs, start, used }] }`: `used` the highest share of the key's budget in use in each bucket (0..1), null where not sampled. At most 200 keys." }
  },
  {
    method: "GET",
    path: "/admin/stream",
    group: "console",
    summary: "The overview as server-sent events, one snapshot a second",
    auth: "admin",
    answer: { status: 200, contentType: "text/event-stream", description: "`event: snapshot` lines with the overview as data." }
  },
  { method: "GET", path: "/ui", group: "console", summary: "The operator console's page", auth: "none", answer: { status: 200, contentType: "text/html", description: "The page." } },
  { method: "GET", path: "/ui/app.js", group: "console", summary: "The console's script", auth: "none", answer: { status: 200, contentType: "text/javascript", description: "The bundle." } },
  { method: "GET", path: "/ui/app.css", group: "console", summary: "The console's style sheet", auth: "none", answer: { status: 200, contentType: "text/css", description: "The styles." } },
  { method: "GET", path: "/ui/session", group: "console", summary: "The cookie's session", auth: "none", answer: { status: 200, description: "`{ signedIn, csrf?, idleTimeoutMs? }`" } },
  {
    method: "POST",
    path: "/ui/session",
    group: "console",
    summary: "Signs in with the admin key: a session cookie and its CSRF token",
    auth: "none",
    body: SignIn,
    answer: { status: 200, description: "`{ signedIn: true, csrf, idleTimeoutMs }` and `set-cookie`." },
    errors: [[401, "wrong admin key"], [403, "cross-origin request"], [429, "too many wrong keys in the last minute"]]
  },
  {
    method: "POST",
    path: "/ui/session/end",
    group: "console",
    summary: "Signs out (same origin and CSRF token required)",
    auth: "none",
    answer: { status: 200, description: "`{ signedIn: false }`" },
    errors: [[401, "not signed in"], [403, "cross-origin request or missing CSRF token"]]
  },
  {
    method: "GET",
    path: "/connect/:appId",
    group: "connect",
    summary: "The link a business opens to connect itself: 302 to the service's grant page, with a return link carrying a signed, single-use state",
    auth: "none",
    answer: { status: 302, contentType: "text/html", description: "`location`: the grant page (`?version=3.0&appId=&returnLink=`)" },
    errors: [[404, "no such application (a page)"], [409, "the application has no secret key or public URL (a page)"]]
  },
  {
    method: "GET",
    path: "/connect/:appId/callback",
    group: "connect",
    summary: "Where the grant page sends the business back (`?state=&accessCode=`): exchanges the code, registers or updates the business, starts its sync",
    auth: "none",
    answer: { status: 200, contentType: "text/html", description: "a page saying the shop is connected, its permissions, depots and expiry" },
    errors: [
      [400, "forged, expired or used state, or an expired or used access code (a page with a link to try again; nothing changed)"],
      [409, "the service refused the application's secret key (a page; nothing changed)"],
      [502, "the service could not be reached (a page; nothing changed)"]
    ]
  }
]
