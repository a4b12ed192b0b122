/**
 * What is written from the reference (./AdminRoutes.ts): the OpenAPI 3.1 document, each
 * route's errors, the drift between the reference and a router's routes, and
 * `docs/admin-api.md`.
 */
import { Schema } from "effect"
import { type RouteDoc, type RouteKey, routes, T } from "./AdminRoutes.ts"

/** `:appId` -> `{appId}` */
const openApiPath = (path: string) => path.replace(/:([A-Za-z]+)/g, "{$1}")
const pathParams = (path: string) => [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!)

const commonErrors = (route: RouteDoc): ReadonlyArray<readonly [number, string]> => [
  ...(route.auth === "admin"
    ? [[401, "no admin key (x-admin-key or Authorization: Bearer) and no console session"] as const, [403, "a console session acting cross-origin or without its CSRF token"] as const]
    : []),
  ...(route.path.startsWith(T) ? [[400, "appId or businessId is not a positive integer"] as const, [404, "no such tenant"] as const] : []),
  ...(route.query !== undefined && route.query.length > 0 ? [[400, "a query parameter out of its bounds (named in the error)"] as const] : []),
  ...(route.auth === "admin" ? [[500, "internal error; the cause is in the server log"] as const] : [])
]

/** Every error a route may answer, by status (the route's own words win). */
export const errorsOf = (route: RouteDoc): ReadonlyArray<readonly [number, string]> => {
  const byStatus = new Map<number, string>()
  for (const [status, text] of [...commonErrors(route), ...(route.errors ?? [])]) {
    byStatus.set(status, byStatus.has(status) ? `${byStatus.get(status)!}; ${text}` : text)
  }
  return [...byStatus.entries()].sort((a, b) => a[0] - b[0])
}

/**
 * The JSON Schema of the body's codec accepts `null` for an absent optional field; the routes
 * decode with the schema itself, which does not, so `null` is taken out of each `anyOf`.
 */
const withoutNull = (json: unknown): unknown => {
  if (Array.isArray(json)) return json.map(withoutNull)
  if (typeof json !== "object" || json === null) return json
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(json)) out[k] = withoutNull(v)
  if (Array.isArray(out["anyOf"])) {
    const members = (out["anyOf"] as Array<Record<string, unknown>>).filter((m) => !(m["type"] === "null" && Object.keys(m).length === 1))
    delete out["anyOf"]
    return members.length === 1 ? { ...out, ...members[0] } : { ...out, anyOf: members }
  }
  return out
}

/** An appId or businessId as the routes take it (the codec's own schema also admits bigint's text forms). */
const IdJson = { anyOf: [{ type: "integer", minimum: 1 }, { type: "string", pattern: "^\\s*0*[1-9][0-9]*\\s*$" }] }

const bodySchema = (schema: Schema.Top): Record<string, unknown> => {
  const doc = Schema.toJsonSchemaDocument(schema)
  const defs = doc.definitions ?? {}
  const json = withoutNull({ ...doc.schema, ...(Object.keys(defs).length === 0 ? {} : { $defs: defs }) }) as Record<string, any>
  for (const id of ["appId", "businessId"]) {
    if (json["properties"]?.[id] !== undefined) json["properties"][id] = IdJson
  }
  return json
}

/** A field's JSON Schema in a few words: `string`, `array of string`, `integer 1..2592000`. */
const typeText = (json: Record<string, any>): string => {
  if (Array.isArray(json["anyOf"])) return [...new Set((json["anyOf"] as Array<Record<string, any>>).map(typeText))].join(" or ")
  if (json["type"] === "array") return `array of ${typeText(json["items"] ?? {})}`
  if (json["type"] === "integer" || json["type"] === "number") {
    const min = json["minimum"] ?? json["exclusiveMinimum"]
    return json["maximum"] !== undefined && json["maximum"] < 1e15 ? `${json["type"]} ${min ?? ""}..${json["maximum"]}` : String(json["type"])
  }
  if (json["enum"] !== undefined) return (json["enum"] as Array<unknown>).map((v) => JSON.stringify(v)).join(" | ")
  return String(json["type"] ?? "any")
}

const ErrorBody = { type: "object", properties: { error: { type: "string" } }, required: ["error"] }

/** The OpenAPI 3.1 document. */
export const document = (version = "0.0.0") => {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of routes) {
    const item = (paths[openApiPath(route.path)] ??= {})
    item[route.method.toLowerCase()] = {
      tags: [route.group],
      summary: route.summary,
      operationId: `${route.method.toLowerCase()}${openApiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}`,
      ...(route.auth === "admin" ? { security: [{ adminKey: [] }, { bearer: [] }, { session: [] }] } : { security: [] }),
      parameters: [
        ...pathParams(route.path).map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })),
        ...(route.query ?? []).map((p) => ({ name: p.name, in: "query", required: false, description: p.description, schema: { type: p.type } }))
      ],
      ...(route.body === undefined ? {} : { requestBody: { required: true, content: { "application/json": { schema: bodySchema(route.body) } } } }),
      responses: {
        [String(route.answer.status)]: {
          description: route.answer.description,
          content: { [route.answer.contentType ?? "application/json"]: {} }
        },
        ...Object.fromEntries(errorsOf(route).map(([status, text]) => [String(status), { description: text, content: { "application/json": { schema: ErrorBody } } }]))
      }
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "ocs sync server: admin API",
      version,
      description: "Tenants, sync, read models, plugins and probes of the sync server. Every /admin route needs the admin key (x-admin-key or Authorization: Bearer) or a console session. Errors are `{ error }` with a message a person can act on."
    },
    components: {
      securitySchemes: {
        adminKey: { type: "apiKey", in: "header", name: "x-admin-key" },
        bearer: { type: "http", scheme: "bearer" },
        session: { type: "apiKey", in: "cookie", name: "ocs_session" }
      }
    },
    paths
  }
}

/** Routes as `METHOD path`, for comparing. */
export const keyOf = (r: RouteKey) => `${r.method} ${r.path}`

/** What the router holds and the reference lacks, and the other way round. */
export const drift = (registered: ReadonlyArray<RouteKey>) => {
  const documented = new Set(routes.map(keyOf))
  const held = new Set(registered.map(keyOf))
  return {
    undocumented: [...held].filter((k) => !documented.has(k)).sort(),
    missing: [...documented].filter((k) => !held.has(k)).sort()
  }
}

const GROUPS = ["probes", "reference", "tenants", "read models", "operations", "plugins", "console"] as const

const fieldsOf = (route: RouteDoc): ReadonlyArray<string> => {
  const json = bodySchema(route.body!) as { properties?: Record<string, Record<string, any>>; required?: ReadonlyArray<string> }
  return Object.entries(json.properties ?? {}).map(([name, p]) => {
    const note = route.bodyNotes?.[name]
    return `\`${name}\` (${typeText(p)}${json.required?.includes(name) ? ", required" : ""})${note === undefined ? "" : `: ${note}`}`
  })
}

/** `docs/admin-api.md`, written from `routes` (`./ocs --filter @ocs/sync-server docs:admin-api`). */
export const markdown = (): string => {
  const out: Array<string> = [
    "# The admin API",
    "",
    "<!-- Written from packages/admin-api/src/AdminRoutes.ts by `./ocs --filter @ocs/sync-server docs:admin-api`; a test fails when this file and the routes differ. -->",
    "",
    "Every route the sync server answers besides `/webhooks/<appId>`. The same reference is served as an",
    "OpenAPI 3.1 document at `GET /admin/openapi.json` (import it into Postman or any OpenAPI client).",
    "",
    "- **Authentication**: every `/admin` route needs the admin key (`server.adminKey`), sent as",
    "  `x-admin-key: <key>` or `Authorization: Bearer <key>`, or a console session cookie (`POST /ui/session`);",
    "  a session may read, and may act (any method but GET) only from the same origin with its CSRF token in",
    "  `x-csrf-token`. Probes and the console's own routes need nothing.",
    "- **Errors** are `{ \"error\": \"...\" }` with a message a person can act on. Every `/admin` route may",
    "  answer **401** (no key and no session), **403** (a session acting cross-origin or without its CSRF token)",
    "  and **500** (an internal error, whose cause is in the server log); each route lists its other errors.",
    "  Every bad parameter is a 400 naming it, never a 500; bodies are limited to 64 KiB (413); ids",
    "  (`appId`, `businessId`) are positive integers, as numbers or strings, answered as exact decimal strings.",
    "- **Bodies** are JSON decoded with the same schema as the configuration file's fields. Unknown fields are",
    "  refused with 400, each named with the nearest known one (`` `expiresat`: unknown key; did you mean `expiresAt`? ``).",
    ""
  ]
  for (const group of GROUPS) {
    out.push(`## ${group[0]!.toUpperCase()}${group.slice(1)}`, "")
    for (const route of routes.filter((r) => r.group === group)) {
      out.push(`### \`${route.method} ${route.path}\``, "", `${route.summary}.${route.auth === "none" ? " No key needed." : ""}`, "")
      if (route.query !== undefined && route.query.length > 0) {
        out.push(`Query: ${route.query.map((p) => `\`${p.name}\` (${p.description})`).join(", ")}.`, "")
      }
      if (route.body !== undefined) {
        out.push("Body (JSON):", "", ...fieldsOf(route).map((f) => `- ${f}`), "")
      }
      out.push(`Answer: **${route.answer.status}**${route.answer.contentType === undefined ? "" : ` (${route.answer.contentType})`} ${route.answer.description}`, "")
      const own = errorsOf(route).filter(([status]) => route.auth !== "admin" || (status !== 401 && status !== 403 && status !== 500))
      out.push(own.length === 0 ? "Errors: only the common ones." : `Errors: ${own.map(([status, text]) => `**${status}** ${text}`).join("; ")}.`, "")
    }
  }
  return out.join("\n")
}
