/**
 * The page service (Vpage, docs/api-catalogue.md §9): pages, conversations and messages with
 * the family's quirks (at most 50 a page, `next` an array, ASC/DESC, message times in
 * milliseconds), ERR_INVALID_PAGE_ID and ERR_PAGE_EXPIRED for one page only.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Json from "@ocs/protocol/Json"
import type { RunningSimulator } from "../src/index.ts"
import { CONVERSATIONS_PER_PAGE, PAGES, USERS } from "../src/PageService.ts"
import { call, type Caller, start } from "./helpers.ts"

const vpage = { family: "vpage" as const }

describe("the page service", () => {
  let sim: RunningSimulator
  let demo: Caller
  beforeAll(async () => {
    sim = await start({ products: 10, orders: 0, bills: 0, customers: 0 })
    demo = sim.demo!
  })
  afterAll(() => sim.close())

  /** Every record of a Vpage list, sending each `next` back as received; the cursors seen. */
  const walk = async (operation: string, filters: object, sort?: object) => {
    const records: Array<any> = []
    const cursors: Array<string> = []
    let next: string | undefined
    for (let i = 0; i < 100; i++) {
      const paginator = `{"size":50${sort === undefined ? "" : `,"sort":${JSON.stringify(sort)}`}${next === undefined ? "" : `,"next":${next}`}}`
      const res = await call(sim, demo, operation, `{"filters":${JSON.stringify(filters)},"paginator":${paginator}}`, vpage)
      assert.strictEqual(res.json?.code, 1, res.text.slice(0, 300))
      assert.isAtMost(res.json.data.length, 50)
      records.push(...res.json.data)
      next = Json.extract(res.text, ["paginator", "next"])
      if (next === undefined) return { records, cursors }
      cursors.push(next)
    }
    throw new Error("did not end")
  }

  it("pages, conversations newest first and messages in ms, 50 a page with array cursors", async () => {
    const pages = (await walk("page/list", {})).records
    assert.strictEqual(pages.length, PAGES)
    assert.isTrue(pages.every((p) => typeof p.id === "string"))
    assert.strictEqual((await call(sim, demo, "page/list", { paginator: { size: 51 } }, vpage)).json.errorCode, "ERR_INVALID_FORM_FIELDS")

    const { records: conversations, cursors } = await walk("conversation/list", {}, { updatedTime: "DESC" })
    assert.strictEqual(conversations.length, PAGES * CONVERSATIONS_PER_PAGE)
    assert.strictEqual(new Set(conversations.map((c) => c.id)).size, conversations.length)
    assert.isTrue(cursors.every((c) => c.startsWith("[")), "next is an array")
    for (let i = 1; i < conversations.length; i++) assert.isAtMost(conversations[i].updatedAt, conversations[i - 1].updatedAt)

    const one = conversations[7]
    const messages = (await walk("conversation/messages", { conversationId: one.id }, { createdAt: "ASC" })).records
    assert.isAtLeast(messages.length, 20)
    assert.isTrue(messages.every((m) => m.conversationId === one.id && m.createdAt > 1e12), "times in milliseconds")
    for (let i = 1; i < messages.length; i++) assert.isAbove(messages[i].createdAt, messages[i - 1].createdAt)
  })

  it("users, tags and the page service's customers; a message sent moves its conversation to the top", async () => {
    const users = (await walk("user/list", {})).records
    assert.strictEqual(users.length, USERS)
    assert.isTrue(users.every((u) => typeof u.id === "string" && typeof u.displayName === "string" && typeof u.posUid === "string"))
    const tags = (await walk("conversation/tags", {})).records
    assert.isAtLeast(tags.length, 5)
    assert.isTrue(tags.every((t) => typeof t.id === "string" && t.status === 1 && typeof t.backgroundColor === "string"))

    const pages = (await walk("page/list", {})).records
    const customers = (await walk("customer/list", { pageId: pages[0].id })).records
    assert.strictEqual(customers.length, CONVERSATIONS_PER_PAGE, "one customer per conversation of the page, 50 a call")
    assert.isTrue(customers.every((c) => c.fanpageId === pages[0].id && Array.isArray(c.phones) && Array.isArray(c.emails)))
    assert.isTrue(customers.some((c) => c.phones.length > 0) && customers.some((c) => c.phones.length === 0))
    const one = customers[3]
    const byUser = (await walk("customer/list", { pageId: pages[0].id, pageUserIds: [one.fanpageUserId] })).records
    assert.deepStrictEqual(byUser.map((c) => c.id), [one.id])

    // Newest first by interaction time: a conversation written to now leads the list.
    const before = (await walk("conversation/list", { pageIds: [pages[0].id] }, { updatedTime: "DESC" })).records
    const last = before[before.length - 1]
    const count = (await walk("conversation/messages", { conversationId: last.id })).records.length
    await sim.control.sendPageMessage(demo.businessId, last.id)
    const after = (await walk("conversation/list", { pageIds: [pages[0].id] }, { updatedTime: "DESC" })).records
    assert.strictEqual(after[0].id, last.id)
    assert.isAbove(after[0].updatedAt, before[0].updatedAt - 1)
    assert.strictEqual(after[0].status, 1, "unread")
    const messages = (await walk("conversation/messages", { conversationId: last.id }, { createdAt: "DESC" })).records
    assert.strictEqual(messages.length, count + 1)
    assert.strictEqual(messages[0].message, `message ${count + 1} of conversation ${last.id}`, "DESC: the new message first")
  })

  it("ERR_INVALID_PAGE_ID for a page the business does not have; ERR_PAGE_EXPIRED for the expired page only", async () => {
    const unknown = await call(sim, demo, "conversation/list", { filters: { pageIds: ["42"] } }, vpage)
    assert.strictEqual(unknown.json.errorCode, "ERR_INVALID_PAGE_ID")

    const pages = (await walk("page/list", {})).records
    const [gone, kept] = [pages[1].id, pages[2].id]
    const onGone = (await walk("conversation/list", { pageIds: [gone] })).records[0]
    await sim.control.expirePage(demo.businessId, gone)
    assert.strictEqual((await call(sim, demo, "conversation/list", { filters: { pageIds: [gone] } }, vpage)).json.errorCode, "ERR_PAGE_EXPIRED")
    assert.strictEqual((await call(sim, demo, "conversation/messages", { filters: { conversationId: onGone.id } }, vpage)).json.errorCode, "ERR_PAGE_EXPIRED")
    // The other pages still answer; a read naming no page lists the live pages' conversations.
    assert.strictEqual((await walk("conversation/list", { pageIds: [kept] })).records.length, CONVERSATIONS_PER_PAGE)
    const live = (await walk("conversation/list", {})).records
    assert.strictEqual(live.length, (PAGES - 1) * CONVERSATIONS_PER_PAGE)
    assert.isFalse(live.some((c) => c.pageId === gone))
    const expiredAt = (await walk("page/list", {})).records.find((p) => p.id === gone).expiredAt
    assert.isAtMost(expiredAt, Math.floor(Date.now() / 1000))
  })
})
