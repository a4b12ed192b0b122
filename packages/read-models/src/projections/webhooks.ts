/** The last webhooksEnabled of each application: application-level (`business_id = ''`). */
import { and, eq } from "drizzle-orm"
import { primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core"
import { parse } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import { bookkeepingColumns, define, held, row, stringify, type TableSpec, tenantColumns, upsert } from "./Projection.ts"

export const table = sqliteTable("webhooks_enabled", {
  ...tenantColumns,
  /** JSON object: id -> event name, as received. */
  registeredEvents: text("registered_events").notNull(),
  ...bookkeepingColumns
}, (t) => [primaryKey({ columns: [t.appId, t.businessId] })])

const spec: TableSpec = { name: "webhooks_enabled", key: ["app_id", "business_id"], content: ["registered_events"], versioned: false, rank: 0 }
const write = upsert(spec)

export const webhooks = define({
  tables: [spec],
  statements: [write],
  apply: {
    WebhooksEnabled: (plan, record, event, index) => row(plan, write, [event.appId, "", stringify(event.registeredEvents), ...held(event, record, index)])
  },
  queries: (orm) => ({
    /** Application-level: the row of `tenant.appId` (webhooksEnabled has no business). */
    webhooks: (tenant: V.Tenant): V.WebhooksEnabled | undefined => {
      const found = orm.select().from(table).where(and(eq(table.appId, tenant.appId), eq(table.businessId, ""))).get()
      return found === undefined ? undefined : { ...found, registeredEvents: parse(found.registeredEvents) }
    }
  })
})
