/**
 * The page service (Vpage, docs/api-catalogue.md §9) of a business: its pages, each page's
 * conversations and each conversation's messages, deterministic from the seed, with the
 * family's quirks: string ids, at most 50 a page, `next` an array, message times in
 * milliseconds (other times in seconds), ERR_INVALID_PAGE_ID for a page the business does not
 * have and ERR_PAGE_EXPIRED for one whose access expired (control:
 * `POST /_sim/businesses/:b/pages/:pageId/expire`). Answered by the listers below
 * (`page/list`, `user/list`, `conversation/list`, `conversation/messages`, `conversation/tags`
 * and the page service's `customer/list`). A message sent to a conversation through the control
 * API (`POST /_sim/businesses/:b/conversations/:id/messages`) moves its update time, so
 * incremental reads by update time have something to find.
 */
import * as Json from "@ocs/protocol/Json"
import { failure } from "./ApiCall.ts"
import type { Business } from "./Auth.ts"
import type { BusinessData } from "./Catalog.ts"
import { fnv1a, hash3 } from "./internal/Random.ts"
import type { Lister, MakeLister } from "./Listers.ts"
import type { Source } from "./Listing.ts"

export const PAGES = 3
export const CONVERSATIONS_PER_PAGE = 60
const PAGE_BASE = 1_000_000_000n
const CONVERSATION_BASE = 5_000_000_000n
const DAY_MS = 24 * 3600 * 1000

export interface Page {
  readonly id: bigint
  readonly pos: number
  readonly name: string
  readonly channel: number
  readonly createdAtMs: number
}

export interface Conversation {
  readonly id: bigint
  readonly page: Page
  readonly type: number
  readonly createdAtMs: number
  /** The last message's time (ms): moves when a message is sent. */
  updatedAtMs: number
  /** Messages of the seed, spread from creation to `seedUpdatedAtMs`. */
  readonly seedMessages: number
  readonly seedUpdatedAtMs: number
  /** Times (ms) of the messages sent later, through the control API. */
  readonly sent: Array<number>
  readonly hasPhone: boolean
  /** 1 unread, 2 read (docs/api-catalogue.md §9). */
  status: number
}

/** Every message of a conversation, seeded and sent. */
export const messageCount = (c: Conversation): number => c.seedMessages + c.sent.length

/** A staff account of the page service (`user/list`). */
export interface User {
  readonly id: bigint
  readonly name: string
  readonly createdAtMs: number
}

/** A conversation tag (`conversation/tags`). */
export interface Tag {
  readonly id: bigint
  readonly name: string
  readonly order: number
  readonly createdAtMs: number
}

export const USERS = 8
const USER_BASE = 7_000_000n
const TAG_BASE = 8_000_000n
const TAG_NAMES = ["Ordered", "Asked price", "Shipping", "Complaint", "VIP", "Follow up"]
const PAGE_USER_BASE = 9_000_000n

/** The page service of one business; expiries are set through the control API. */
export class PageWorld {
  readonly pages: ReadonlyArray<Page>
  readonly conversations: ReadonlyArray<Conversation>
  /** Page id (text) -> when its access expired (ms). */
  readonly expired = new Map<string, number>()

  readonly seed: number
  readonly epochMs: number

  constructor(seed: number, epochMs: number, conversationsPerPage = CONVERSATIONS_PER_PAGE) {
    this.seed = seed
    this.epochMs = epochMs
    this.pages = Array.from({ length: PAGES }, (_, pos) => ({
      id: PAGE_BASE + BigInt(pos + 1),
      pos,
      name: `Fanpage ${pos + 1}`,
      channel: 1 + (pos % 2),
      createdAtMs: epochMs - (400 + pos) * DAY_MS
    }))
    this.conversations = this.pages.flatMap((page) =>
      Array.from({ length: conversationsPerPage }, (_, i) => {
        const pos = page.pos * conversationsPerPage + i
        const h = hash3(seed, pos, fnv1a("conversation"))
        const createdAtMs = epochMs - (1 + (h % 60)) * DAY_MS
        return {
          id: CONVERSATION_BASE + BigInt(pos + 1),
          page,
          type: 1 + (h % 2),
          createdAtMs,
          updatedAtMs: createdAtMs + (h % 1000) * 60_000,
          seedUpdatedAtMs: createdAtMs + (h % 1000) * 60_000,
          seedMessages: 20 + (h % 61),
          sent: [],
          hasPhone: h % 3 === 0,
          status: 1 + (h % 2)
        }
      })
    )
    this.users = Array.from({ length: USERS }, (_, i) => ({
      id: USER_BASE + BigInt(i + 1),
      name: `Staff ${i + 1}`,
      createdAtMs: epochMs - (300 - i) * DAY_MS
    }))
    this.tags = TAG_NAMES.map((name, i) => ({ id: TAG_BASE + BigInt(i + 1), name, order: i + 1, createdAtMs: epochMs - (200 - i) * DAY_MS }))
  }

  readonly users: ReadonlyArray<User>
  readonly tags: ReadonlyArray<Tag>
  /** Moves on every change, so sorted indexes are rebuilt. */
  version = 0

  /** A customer writes to a conversation at `atMs`: it moves to the top, unread. */
  send(c: Conversation, atMs: number): void {
    c.sent.push(atMs)
    c.updatedAtMs = atMs
    c.status = 1
    this.version++
  }

  page(id: string): Page | undefined {
    return /^\d{1,20}$/.test(id) ? this.pages.find((p) => p.id === BigInt(id)) : undefined
  }

  conversation(id: string): Conversation | undefined {
    if (!/^\d{1,20}$/.test(id)) return undefined
    const pos = BigInt(id) - CONVERSATION_BASE - 1n
    return pos >= 0n && pos < BigInt(this.conversations.length) ? this.conversations[Number(pos)] : undefined
  }

  expiredAt(page: Page): number {
    return this.expired.get(String(page.id)) ?? this.epochMs + 365 * DAY_MS
  }
}

const worlds = new WeakMap<BusinessData, PageWorld>()

/** The page service of a business (built on first use). */
export const pageWorld = (business: Business): PageWorld => {
  let world = worlds.get(business.data)
  if (world === undefined) worlds.set(business.data, world = new PageWorld(business.catalog.seed, business.catalog.epochMs, business.catalog.conversationsPerPage))
  return world
}

const unix = (ms: number): number => Math.floor(ms / 1000)

const arraySource = <R extends { readonly id: bigint }>(
  items: ReadonlyArray<R>,
  base: bigint,
  sortValue: (r: R, field: string) => string | number | bigint,
  version: () => number = () => 0
): Source<R> => ({
  positions: () => items.length,
  at: (pos) => items[pos],
  idAt: (pos) => base + BigInt(pos),
  posOf: (id) => (id >= base && id < base + BigInt(items.length) ? Number(id - base) : undefined),
  base,
  version,
  sortValue
})

/** The page user (the customer) a conversation is with. */
const pageUserOf = (c: Conversation): bigint => PAGE_USER_BASE + c.id - CONVERSATION_BASE

const texts = (v: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(v) ? v.map((x) => String(x)) : v === undefined || v === null ? undefined : [String(v)]

/**
 * The pages a request names, checked: ERR_INVALID_PAGE_ID for one the business does not have,
 * ERR_PAGE_EXPIRED for one whose access expired (docs/api-catalogue.md §9). "answered" when a
 * failure was sent.
 */
const checkPages = (call: Parameters<MakeLister>[0]["call"], world: PageWorld, ids: ReadonlyArray<string>, now: number): ReadonlyArray<Page> | "answered" => {
  const pages: Array<Page> = []
  for (const id of ids) {
    const page = world.page(id)
    if (page === undefined) {
      failure(call, "ERR_INVALID_PAGE_ID", `page ${id} is not a page of this business`)
      return "answered"
    }
    if (world.expiredAt(page) <= now) {
      failure(call, "ERR_PAGE_EXPIRED", `the access to page ${id} expired; the page owner must grant it again`)
      return "answered"
    }
    pages.push(page)
  }
  return pages
}

const pageList: MakeLister = ({ business, checked }) => {
  const world = pageWorld(business)
  const ids = texts(checked.filters["ids"])
  return {
    source: arraySource(world.pages, PAGE_BASE + 1n, (p, f) => (f === "name" ? p.name : f === "createdAt" ? p.createdAtMs : p.id)),
    predicate: ids === undefined ? undefined : (p: Page) => ids.includes(String(p.id)),
    write: (p: Page) =>
      Json.stringify({ id: String(p.id), name: p.name, channel: p.channel, createdAt: unix(p.createdAtMs), expiredAt: unix(world.expiredAt(p)) }),
    cacheKey: "vpage:page"
  } satisfies Lister<Page>
}

const conversationList: MakeLister = ({ call, business, checked }) => {
  const world = pageWorld(business)
  const named = texts(checked.filters["pageIds"])
  const pages = checkPages(call, world, named ?? world.pages.filter((p) => world.expiredAt(p) > call.env.now()).map((p) => String(p.id)), call.env.now())
  if (pages === "answered") return "depot"
  const shown = new Set(pages.map((p) => p.id))
  const type = typeof checked.filters["type"] === "number" ? checked.filters["type"] : undefined
  return {
    // Sorted by interaction time (`updatedTime`), newest first with DESC: what an incremental
    // reader walks until it passes its bound (docs/api-catalogue.md §9).
    source: arraySource(world.conversations, CONVERSATION_BASE + 1n, (c, f) => (f === "updatedTime" || f === "updatedAt" ? c.updatedAtMs : c.id), () => world.version),
    predicate: (c: Conversation) => shown.has(c.page.id) && (type === undefined || c.type === type),
    write: (c: Conversation) =>
      Json.stringify({
        id: String(c.id),
        channel: c.page.channel,
        type: c.type,
        pageId: String(c.page.id),
        pageUserId: String(pageUserOf(c)),
        pageUserName: `Customer ${c.id - CONVERSATION_BASE}`,
        hasReply: c.sent.length === 0 && c.seedMessages % 3 !== 1,
        hasPhone: c.hasPhone,
        assignedGroupId: "0",
        createdAt: unix(c.createdAtMs),
        updatedAt: unix(c.updatedAtMs),
        lastSeenMessageAt: unix(c.updatedAtMs),
        lastMessage: `message ${messageCount(c)} of conversation ${c.id}`,
        status: c.status,
        isFromLive: 0,
        pagePostId: null,
        customerAvatar: null
      }),
    cacheKey: "vpage:conversation"
  } satisfies Lister<Conversation>
}

interface Message {
  readonly id: bigint
  readonly n: number
  readonly conversation: Conversation
}

const conversationMessages: MakeLister = ({ call, business, checked }) => {
  const world = pageWorld(business)
  const id = String(checked.filters["conversationId"] ?? "")
  const conversation = world.conversation(id)
  if (conversation === undefined) {
    failure(call, "ERR_INVALID_FORM_FIELDS", { "filters.conversationId": `no conversation ${id}` })
    return "depot"
  }
  if (checkPages(call, world, [String(conversation.page.id)], call.env.now()) === "answered") return "depot"
  const base = conversation.id * 1000n
  const c = conversation
  const messages: ReadonlyArray<Message> = Array.from({ length: messageCount(c) }, (_, n) => ({ id: base + BigInt(n), n, conversation }))
  // The seed's spread from the conversation's creation to its first update, then the ones sent
  // later; in milliseconds (docs/api-catalogue.md §9).
  const at = (m: Message) =>
    m.n >= c.seedMessages
      ? c.sent[m.n - c.seedMessages]!
      : c.createdAtMs + Math.floor(((c.seedUpdatedAtMs - c.createdAtMs) * m.n) / Math.max(1, c.seedMessages - 1)) + m.n
  const fromCustomer = (m: Message) => m.n >= c.seedMessages || m.n % 3 !== 2
  return {
    source: arraySource(messages, base, (m, f) => (f === "createdAt" ? at(m) : m.id)),
    predicate: undefined,
    write: (m: Message) =>
      Json.stringify({
        // Message ids are text (the reference shows the chat platform's own ids).
        id: `m_${m.id}`,
        conversationId: String(conversation.id),
        pageId: String(conversation.page.id),
        senderId: fromCustomer(m) ? String(pageUserOf(conversation)) : String(conversation.page.id),
        senderName: fromCustomer(m) ? `Customer ${conversation.id - CONVERSATION_BASE}` : conversation.page.name,
        createdById: fromCustomer(m) ? null : String(USER_BASE + 1n + BigInt(m.n % USERS)),
        createdByName: fromCustomer(m) ? null : `Staff ${1 + (m.n % USERS)}`,
        createdAt: at(m),
        message: `message ${m.n + 1} of conversation ${conversation.id}`,
        pageUserId: String(pageUserOf(conversation))
      }),
    cacheKey: `vpage:messages:${conversation.id}:${messageCount(c)}`
  } satisfies Lister<Message>
}

const userList: MakeLister = ({ business, checked }) => {
  const world = pageWorld(business)
  const ids = texts(checked.filters["userIds"])
  return {
    source: arraySource(world.users, USER_BASE + 1n, (u, f) => (f === "createdAt" ? u.createdAtMs : u.id)),
    predicate: ids === undefined ? undefined : (u: User) => ids.includes(String(u.id)),
    write: (u: User) =>
      Json.stringify({ id: String(u.id), displayName: u.name, posUid: String(u.id - USER_BASE), posName: `pos.staff${u.id - USER_BASE}`, createdAt: unix(u.createdAtMs) }),
    cacheKey: "vpage:user"
  } satisfies Lister<User>
}

const conversationTags: MakeLister = ({ business }) => {
  const world = pageWorld(business)
  return {
    source: arraySource(world.tags, TAG_BASE + 1n, (t, f) => (f === "createdAt" ? t.createdAtMs : t.id)),
    predicate: undefined,
    write: (t: Tag) =>
      Json.stringify({
        id: String(t.id),
        name: t.name,
        status: 1,
        color: "#ffffff",
        backgroundColor: ["#2e3191", "#d32f2f", "#388e3c"][t.order % 3]!,
        order: t.order,
        createdAt: unix(t.createdAtMs),
        shortcut: ""
      }),
    cacheKey: "vpage:tag"
  } satisfies Lister<Tag>
}

/**
 * The page service's customers (`customer/list` on the Vpage host): the person behind each
 * conversation, with the phones and emails a conversation with a phone has given.
 */
const pageCustomers: MakeLister = ({ call, business, checked }) => {
  const world = pageWorld(business)
  const named = checked.filters["pageId"]
  const pages = checkPages(call, world, named === undefined || named === null ? world.pages.filter((p) => world.expiredAt(p) > call.env.now()).map((p) => String(p.id)) : [String(named)], call.env.now())
  if (pages === "answered") return "depot"
  const shown = new Set(pages.map((p) => p.id))
  const users = texts(checked.filters["pageUserIds"])
  return {
    source: arraySource(world.conversations, CONVERSATION_BASE + 1n, (c) => c.id),
    predicate: (c: Conversation) => shown.has(c.page.id) && (users === undefined || users.includes(String(pageUserOf(c)))),
    write: (c: Conversation) => {
      const n = c.id - CONVERSATION_BASE
      return Json.stringify({
        id: String(n),
        fanpageId: String(c.page.id),
        fanpageUserId: String(pageUserOf(c)),
        name: `Customer ${n}`,
        createdTime: unix(c.createdAtMs),
        phones: c.hasPhone ? [`09${String(10_000_000n + n * 7919n % 90_000_000n).padStart(8, "0")}`] : [],
        emails: n % 4n === 0n ? [`customer${n}@example.com`] : []
      })
    },
    cacheKey: "vpage:customer"
  } satisfies Lister<Conversation>
}

/** The page service's typed reads, by `resource/operation`. */
export const pageListers: Readonly<Record<string, MakeLister>> = {
  "page/list": pageList,
  "user/list": userList,
  "conversation/list": conversationList,
  "conversation/messages": conversationMessages,
  "conversation/tags": conversationTags,
  "customer/list": pageCustomers
}
