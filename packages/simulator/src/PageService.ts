/**
 * The page service (Vpage, docs/api-catalogue.md §9) of a business: its pages, each page's
 * conversations and each conversation's messages, deterministic from the seed, with the
 * family's quirks: string ids, at most 50 a page, `next` an array, message times in
 * milliseconds (other times in seconds), ERR_INVALID_PAGE_ID for a page the business does not
 * have and ERR_PAGE_EXPIRED for one whose access expired (control:
 * `POST /_sim/businesses/:b/pages/:pageId/expire`). Answered by the listers below
 * (`page/list`, `conversation/list`, `conversation/messages`).
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
  readonly updatedAtMs: number
  readonly messages: number
  readonly hasPhone: boolean
  readonly status: number
}

/** The page service of one business; expiries are set through the control API. */
export class PageWorld {
  readonly pages: ReadonlyArray<Page>
  readonly conversations: ReadonlyArray<Conversation>
  /** Page id (text) -> when its access expired (ms). */
  readonly expired = new Map<string, number>()

  readonly seed: number
  readonly epochMs: number

  constructor(seed: number, epochMs: number) {
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
      Array.from({ length: CONVERSATIONS_PER_PAGE }, (_, i) => {
        const pos = page.pos * CONVERSATIONS_PER_PAGE + i
        const h = hash3(seed, pos, fnv1a("conversation"))
        const createdAtMs = epochMs - (1 + (h % 60)) * DAY_MS
        return {
          id: CONVERSATION_BASE + BigInt(pos + 1),
          page,
          type: 1 + (h % 2),
          createdAtMs,
          updatedAtMs: createdAtMs + (h % 1000) * 60_000,
          messages: 20 + (h % 61),
          hasPhone: h % 3 === 0,
          status: 1 + (h % 2)
        }
      })
    )
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
  if (world === undefined) worlds.set(business.data, world = new PageWorld(business.catalog.seed, business.catalog.epochMs))
  return world
}

const unix = (ms: number): number => Math.floor(ms / 1000)

const arraySource = <R extends { readonly id: bigint }>(items: ReadonlyArray<R>, base: bigint, sortValue: (r: R, field: string) => string | number | bigint): Source<R> => ({
  positions: () => items.length,
  at: (pos) => items[pos],
  idAt: (pos) => base + BigInt(pos),
  posOf: (id) => (id >= base && id < base + BigInt(items.length) ? Number(id - base) : undefined),
  base,
  version: () => 0,
  sortValue
})

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
    source: arraySource(world.conversations, CONVERSATION_BASE + 1n, (c, f) => (f === "updatedTime" || f === "updatedAt" ? c.updatedAtMs : c.id)),
    predicate: (c: Conversation) => shown.has(c.page.id) && (type === undefined || c.type === type),
    write: (c: Conversation) =>
      Json.stringify({
        id: String(c.id),
        channel: c.page.channel,
        type: c.type,
        pageId: String(c.page.id),
        pageUserId: String(9_000_000n + c.id - CONVERSATION_BASE),
        pageUserName: `Customer ${c.id - CONVERSATION_BASE}`,
        hasReply: c.messages % 2 === 0,
        hasPhone: c.hasPhone,
        assignedGroupId: "0",
        createdAt: unix(c.createdAtMs),
        updatedAt: unix(c.updatedAtMs),
        lastSeenMessageAt: unix(c.updatedAtMs),
        lastMessage: `message ${c.messages} of conversation ${c.id}`,
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
  const messages: ReadonlyArray<Message> = Array.from({ length: conversation.messages }, (_, n) => ({ id: base + BigInt(n), n, conversation }))
  // Spread from the conversation's creation to its last update, in milliseconds (docs/api-catalogue.md §9).
  const at = (m: Message) => conversation.createdAtMs + Math.floor(((conversation.updatedAtMs - conversation.createdAtMs) * m.n) / Math.max(1, conversation.messages - 1)) + m.n
  const fromCustomer = (m: Message) => m.n % 3 !== 2
  return {
    source: arraySource(messages, base, (m, f) => (f === "createdAt" ? at(m) : m.id)),
    predicate: undefined,
    write: (m: Message) =>
      Json.stringify({
        id: m.id,
        conversationId: String(conversation.id),
        pageId: String(conversation.page.id),
        senderId: fromCustomer(m) ? String(9_000_000n + conversation.id - CONVERSATION_BASE) : String(conversation.page.id),
        senderName: fromCustomer(m) ? `Customer ${conversation.id - CONVERSATION_BASE}` : conversation.page.name,
        createdById: fromCustomer(m) ? null : 7,
        createdByName: fromCustomer(m) ? null : "Staff 7",
        createdAt: at(m),
        message: `message ${m.n + 1} of conversation ${conversation.id}`,
        pageUserId: String(9_000_000n + conversation.id - CONVERSATION_BASE)
      }),
    cacheKey: `vpage:messages:${conversation.id}`
  } satisfies Lister<Message>
}

/** The page service's typed reads, by `resource/operation`. */
export const pageListers: Readonly<Record<string, MakeLister>> = {
  "page/list": pageList,
  "conversation/list": conversationList,
  "conversation/messages": conversationMessages
}
