/**
 * The page service (Vpage, docs/api-catalogue.md §9): pages, staff users, conversation tags,
 * conversations per page with their last message and status, each conversation's messages in
 * order, and the page customers with their phones and emails. Their pages arrive as documents
 * of kinds `page`, `pageUser`, `conversationTag`, `conversation`, `message` and `pageCustomer`
 * (`Operation.pageServiceReads`); `documents.ts` hands those kinds here, so they get typed rows
 * instead of a document row. The page service sends no webhooks and has no deletion feed: rows
 * are the last version a pull saw.
 */
import { and, asc, desc, eq, sql } from "drizzle-orm"
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { byId, limitOf, ofTenant, page, parse, when, withRecord } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import {
  bookkeepingColumns, define, entityTable, type EventOf, held, row, stringify, type TableSpec, tenantColumns, textOf, toMillis, upsert, versionColumns
} from "./Projection.ts"

const keyed = (t: { appId: any; businessId: any; id: any }) => primaryKey({ columns: [t.appId, t.businessId, t.id] })

export const pagesTable = sqliteTable("vpage_pages", {
  ...tenantColumns,
  id: text("id").notNull(),
  name: text("name"),
  /** 1 Facebook, 2 Instagram, ... as the service numbers them. */
  channel: text("channel"),
  createdAtMs: integer("created_at_ms"),
  /** When the page's access expires (or expired): after it, its reads answer ERR_PAGE_EXPIRED. */
  expiredAtMs: integer("expired_at_ms"),
  record: text("record").notNull(),
  ...bookkeepingColumns
}, (t) => [keyed(t)])

export const usersTable = sqliteTable("vpage_users", {
  ...tenantColumns,
  id: text("id").notNull(),
  displayName: text("display_name"),
  /** The POS account the page-service user is linked to. */
  posUid: text("pos_uid"),
  posName: text("pos_name"),
  createdAtMs: integer("created_at_ms"),
  record: text("record").notNull(),
  ...bookkeepingColumns
}, (t) => [keyed(t)])

export const tagsTable = sqliteTable("vpage_tags", {
  ...tenantColumns,
  id: text("id").notNull(),
  name: text("name"),
  status: text("status"),
  color: text("color"),
  backgroundColor: text("background_color"),
  /** The tag's `order` (its place in the service's list). */
  position: integer("position"),
  createdAtMs: integer("created_at_ms"),
  record: text("record").notNull(),
  ...bookkeepingColumns
}, (t) => [keyed(t)])

export const conversationsTable = sqliteTable("vpage_conversations", {
  ...tenantColumns,
  id: text("id").notNull(),
  pageId: text("page_id"),
  /** 1 comment, 2 message. */
  type: text("type"),
  /** 1 unread, 2 read. */
  status: text("status"),
  pageUserId: text("page_user_id"),
  pageUserName: text("page_user_name"),
  hasPhone: integer("has_phone"),
  hasReply: integer("has_reply"),
  lastMessage: text("last_message"),
  createdAtMs: integer("created_at_ms"),
  record: text("record").notNull(),
  /** `updatedAt` (unix s, the last interaction): the conflict rule keeps the newest. */
  ...versionColumns,
  ...bookkeepingColumns
}, (t) => [keyed(t), index("vpage_conversations_tenant_page").on(t.appId, t.businessId, t.pageId, t.updatedAtMs)])

export const messagesTable = sqliteTable("vpage_messages", {
  ...tenantColumns,
  id: text("id").notNull(),
  conversationId: text("conversation_id"),
  pageId: text("page_id"),
  senderId: text("sender_id"),
  senderName: text("sender_name"),
  /** The staff user who wrote it (null for the customer's own). */
  createdById: text("created_by_id"),
  message: text("message"),
  /** Milliseconds, as the service writes message times (docs/api-catalogue.md §9). */
  createdAtMs: integer("created_at_ms"),
  record: text("record").notNull(),
  ...bookkeepingColumns
}, (t) => [keyed(t), index("vpage_messages_tenant_conversation").on(t.appId, t.businessId, t.conversationId, t.createdAtMs)])

export const customersTable = sqliteTable("vpage_customers", {
  ...tenantColumns,
  id: text("id").notNull(),
  pageId: text("page_id"),
  pageUserId: text("page_user_id"),
  name: text("name"),
  /** JSON arrays of text, as the service lists them. */
  phones: text("phones"),
  emails: text("emails"),
  createdAtMs: integer("created_at_ms"),
  record: text("record").notNull(),
  ...bookkeepingColumns
}, (t) => [keyed(t), index("vpage_customers_tenant_page").on(t.appId, t.businessId, t.pageId)])

const pageSpec = entityTable("vpage_pages", ["name", "channel", "created_at_ms", "expired_at_ms", "record"], false)
const userSpec = entityTable("vpage_users", ["display_name", "pos_uid", "pos_name", "created_at_ms", "record"], false)
const tagSpec = entityTable("vpage_tags", ["name", "status", "color", "background_color", "position", "created_at_ms", "record"], false)
const conversationSpec = entityTable(
  "vpage_conversations",
  ["page_id", "type", "status", "page_user_id", "page_user_name", "has_phone", "has_reply", "last_message", "created_at_ms", "record", "updated_at", "updated_at_ms"],
  true
)
const messageSpec = entityTable("vpage_messages", ["conversation_id", "page_id", "sender_id", "sender_name", "created_by_id", "message", "created_at_ms", "record"], false)
const customerSpec = entityTable("vpage_customers", ["page_id", "page_user_id", "name", "phones", "emails", "created_at_ms", "record"], false)
const specs: ReadonlyArray<TableSpec> = [pageSpec, userSpec, tagSpec, conversationSpec, messageSpec, customerSpec]
const [writePage, writeUser, writeTag, writeConversation, writeMessage, writeCustomer] = specs.map(upsert) as [
  ReturnType<typeof upsert>, ReturnType<typeof upsert>, ReturnType<typeof upsert>, ReturnType<typeof upsert>, ReturnType<typeof upsert>, ReturnType<typeof upsert>
]

type Document = EventOf<"DocumentObserved">

const flag = (v: unknown): number | null => (typeof v === "boolean" ? (v ? 1 : 0) : typeof v === "number" ? (v === 0 ? 0 : 1) : null)
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : typeof v === "bigint" ? Number(v) : null)
/** Unix seconds to ms (the service's times, except message times). */
const seconds = (v: unknown): number | null => toMillis(v) ?? null
/** Message times are milliseconds already (docs/api-catalogue.md §9). */
const millis = (v: unknown): number | null => num(v)
const list = (v: unknown): string | null => (Array.isArray(v) ? stringify(v.map((x) => textOf(x))) : null)

/** The rows of one page-service document, keyed by its kind. */
const rules: Readonly<Record<string, (plan: Plan, record: ProjectableRecord, event: Document, id: string, index: number) => void>> = {
  page: (plan, record, e, id, index) => {
    const d = e.document
    row(plan, writePage, [e.appId, e.businessId, id, textOf(d["name"]), textOf(d["channel"]), seconds(d["createdAt"]), seconds(d["expiredAt"]), stringify(d), ...held(e, record, index)])
  },
  pageUser: (plan, record, e, id, index) => {
    const d = e.document
    row(plan, writeUser, [e.appId, e.businessId, id, textOf(d["displayName"]), textOf(d["posUid"]), textOf(d["posName"]), seconds(d["createdAt"]), stringify(d), ...held(e, record, index)])
  },
  conversationTag: (plan, record, e, id, index) => {
    const d = e.document
    row(plan, writeTag, [
      e.appId, e.businessId, id, textOf(d["name"]), textOf(d["status"]), textOf(d["color"]), textOf(d["backgroundColor"]), num(d["order"]), seconds(d["createdAt"]),
      stringify(d), ...held(e, record, index)
    ])
  },
  conversation: (plan, record, e, id, index) => {
    const d = e.document
    row(plan, writeConversation, [
      e.appId, e.businessId, id, textOf(d["pageId"]), textOf(d["type"]), textOf(d["status"]), textOf(d["pageUserId"]), textOf(d["pageUserName"]),
      flag(d["hasPhone"]), flag(d["hasReply"]), textOf(d["lastMessage"]), seconds(d["createdAt"]),
      stringify(d), textOf(d["updatedAt"]), seconds(d["updatedAt"]), ...held(e, record, index)
    ])
  },
  message: (plan, record, e, id, index) => {
    const d = e.document
    row(plan, writeMessage, [
      e.appId, e.businessId, id, textOf(d["conversationId"]), textOf(d["pageId"]), textOf(d["senderId"]), textOf(d["senderName"]), textOf(d["createdById"]),
      textOf(d["message"]), millis(d["createdAt"]), stringify(d), ...held(e, record, index)
    ])
  },
  pageCustomer: (plan, record, e, id, index) => {
    const d = e.document
    row(plan, writeCustomer, [
      e.appId, e.businessId, id, textOf(d["fanpageId"]), textOf(d["fanpageUserId"]), textOf(d["name"]), list(d["phones"]), list(d["emails"]), seconds(d["createdTime"]),
      stringify(d), ...held(e, record, index)
    ])
  }
}

/** The kinds of documents this module types (documents.ts writes no document row for them). */
export const kinds: ReadonlySet<string> = new Set(Object.keys(rules))

/** Rows of a page-service document; false when its kind is not one of ours or it has no id (a document row then keeps it). */
export const applyDocument = (plan: Plan, record: ProjectableRecord, event: Document, index: number): boolean => {
  const rule = rules[event.kind]
  if (rule === undefined || event.documentId === undefined) return false
  rule(plan, record, event, event.documentId, index)
  return true
}

const withLists = (r: typeof customersTable.$inferSelect): V.PageCustomer => ({ ...withRecord(r), phones: parse(r.phones), emails: parse(r.emails) })

/** A conversation with its flags as booleans. */
const conversationView = (r: typeof conversationsTable.$inferSelect): V.PageConversation => ({
  ...withRecord(r),
  hasPhone: r.hasPhone === null ? null : r.hasPhone === 1,
  hasReply: r.hasReply === null ? null : r.hasReply === 1
})

export const pageService = define({
  tables: specs,
  statements: [writePage, writeUser, writeTag, writeConversation, writeMessage, writeCustomer],
  apply: {},
  queries: (orm) => ({
    /** The tenant's pages, by id (a business has a handful). */
    vpagePages: (tenant: V.Tenant): ReadonlyArray<V.PagePage> =>
      orm.select().from(pagesTable).where(ofTenant(pagesTable, tenant)).orderBy(asc(pagesTable.id)).all().map(withRecord),
    vpageUsers: (tenant: V.Tenant): ReadonlyArray<V.PageUser> =>
      orm.select().from(usersTable).where(ofTenant(usersTable, tenant)).orderBy(asc(usersTable.id)).all().map(withRecord),
    /** Tags in the service's order. */
    vpageTags: (tenant: V.Tenant): ReadonlyArray<V.PageTag> =>
      orm.select().from(tagsTable).where(ofTenant(tagsTable, tenant)).orderBy(asc(tagsTable.position), asc(tagsTable.id)).all().map(withRecord),
    /** Conversations, the latest interaction first (keyset: `after` a conversation id), of one page or all, by status. */
    vpageConversations: (tenant: V.Tenant, options?: V.PageConversationQuery): V.Page<V.PageConversation> => {
      const limit = limitOf(options)
      const c = conversationsTable
      const after = options?.after
      const rows = orm.select().from(c).where(and(
        ofTenant(c, tenant),
        when(options?.pageId, (v) => eq(c.pageId, v)),
        when(options?.status, (v) => eq(c.status, v)),
        after === undefined ? undefined : sql`(coalesce(${c.updatedAtMs}, -1), ${c.id}) < (SELECT coalesce(p.updated_at_ms, -1), p.id FROM vpage_conversations p
          WHERE p.app_id = ${tenant.appId} AND p.business_id = ${tenant.businessId} AND p.id = ${after})`
      )).orderBy(desc(sql`coalesce(${c.updatedAtMs}, -1)`), desc(c.id)).limit(limit).all()
      return page(rows.map(conversationView), limit)
    },
    vpageConversation: (tenant: V.Tenant, conversationId: string): V.PageConversation | undefined => {
      const found = orm.select().from(conversationsTable).where(byId(conversationsTable, tenant, conversationId)).get()
      return found === undefined ? undefined : conversationView(found)
    },
    /** A conversation's messages in the order they were written (keyset: `after` a message id). */
    vpageMessages: (tenant: V.Tenant, conversationId: string, options?: V.PageOptions): V.Page<V.PageMessage> => {
      const limit = limitOf(options)
      const m = messagesTable
      const after = options?.after
      const rows = orm.select().from(m).where(and(
        ofTenant(m, tenant),
        eq(m.conversationId, conversationId),
        after === undefined ? undefined : sql`(coalesce(${m.createdAtMs}, -1), ${m.id}) > (SELECT coalesce(p.created_at_ms, -1), p.id FROM vpage_messages p
          WHERE p.app_id = ${tenant.appId} AND p.business_id = ${tenant.businessId} AND p.id = ${after})`
      )).orderBy(asc(sql`coalesce(${m.createdAtMs}, -1)`), asc(m.id)).limit(limit).all()
      return page(rows.map(withRecord), limit)
    },
    /** Page customers by id, of one page or all. */
    vpageCustomers: (tenant: V.Tenant, options?: V.PageCustomerQuery): V.Page<V.PageCustomer> => {
      const limit = limitOf(options)
      const c = customersTable
      const rows = orm.select().from(c).where(and(
        ofTenant(c, tenant),
        when(options?.pageId, (v) => eq(c.pageId, v)),
        options?.after === undefined ? undefined : sql`${c.id} > ${options.after}`
      )).orderBy(asc(c.id)).limit(limit).all()
      return page(rows.map(withLists), limit)
    }
  })
})
