/**
 * The page service's read models (docs/api-catalogue.md §9), Given/When/Then: pages of the six
 * Vpage kinds in, typed rows out (no document rows); a conversation's newer interaction wins
 * whatever order its pages arrive in; messages in the order written; customers' phones and
 * emails as lists.
 */
import { assert, describe, it } from "@effect/vitest"
import { ReadModels } from "@ocs/read-models"
import { Effect, Option } from "effect"
import { appendAndProject, BIZ, files, layer, otherTenant, syncPage, tenant } from "./helpers.ts"

const conversation = (id: string, updatedAt: number, lastMessage: string, status = 1) => ({
  id, channel: 1, type: 2, pageId: "101", pageUserId: `u${id}`, pageUserName: `Customer ${id}`, hasReply: false, hasPhone: true,
  assignedGroupId: "", createdAt: 1_750_000_000, updatedAt, lastSeenMessageAt: updatedAt, lastMessage, status
})
const message = (id: string, conversationId: string, createdAt: number, text: string) => ({
  id, conversationId, pageId: "101", senderId: "u1", senderName: "Customer", createdById: null, createdByName: null, createdAt, message: text, pageUserId: "u1"
})

describe("the page service's read models", () => {
  it.live("pages, users, tags, conversations (newest interaction wins), messages in order, customers with phones and emails", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        syncPage(BIZ, "page", [{ id: "101", name: "Shop page", channel: 1, createdAt: 1_700_000_000, expiredAt: 1_800_000_000 }], { updatedAtField: "" }),
        syncPage(BIZ, "pageUser", [{ id: "7000001", displayName: "Staff 1", posUid: "1", posName: "pos.staff1", createdAt: 1_700_000_000 }]),
        syncPage(BIZ, "conversationTag", [
          { id: "t2", name: "VIP", status: 1, color: "#fff", backgroundColor: "#000", order: 2, createdAt: 1_700_000_000, shortcut: "" },
          { id: "t1", name: "Ordered", status: 1, color: "#fff", backgroundColor: "#111", order: 1, createdAt: 1_700_000_000, shortcut: "" }
        ]),
        // The newer interaction arrives first, an older page of the same conversation after it.
        syncPage(BIZ, "conversation", [conversation("101_1", 1_760_000_100, "see you", 1), conversation("101_2", 1_760_000_050, "thanks", 2)]),
        syncPage(BIZ, "conversation", [conversation("101_1", 1_760_000_000, "hello", 2)]),
        syncPage(BIZ, "message", [message("m_3", "101_1", 1_760_000_100_000, "see you"), message("m_1", "101_1", 1_760_000_000_000, "hello")], { updatedAtField: "" }),
        syncPage(BIZ, "message", [message("m_2", "101_1", 1_760_000_050_000, "price?")], { updatedAtField: "" }),
        syncPage(BIZ, "pageCustomer", [{ id: "11", fanpageId: "101", fanpageUserId: "u101_1", name: "Lan", createdTime: 1_750_000_000, phones: ["0912345678"], emails: [] }])
      ])
      assert.deepStrictEqual((yield* rm.vpagePages(tenant)).map((p) => [p.id, p.name, p.expiredAtMs]), [["101", "Shop page", 1_800_000_000_000]])
      assert.deepStrictEqual((yield* rm.vpageUsers(tenant)).map((u) => [u.id, u.displayName, u.posUid]), [["7000001", "Staff 1", "1"]])
      assert.deepStrictEqual((yield* rm.vpageTags(tenant)).map((t) => t.name), ["Ordered", "VIP"], "in the service's order")

      const conversations = (yield* rm.vpageConversations(tenant, { pageId: "101" })).items
      assert.deepStrictEqual(conversations.map((c) => [c.id, c.lastMessage, c.status, c.hasPhone]), [["101_1", "see you", "1", true], ["101_2", "thanks", "2", true]])
      assert.deepStrictEqual((yield* rm.vpageConversations(tenant, { status: "2" })).items.map((c) => c.id), ["101_2"])
      const firstPage = yield* rm.vpageConversations(tenant, { limit: 1 })
      assert.deepStrictEqual((yield* rm.vpageConversations(tenant, { limit: 1, after: firstPage.next })).items.map((c) => c.id), ["101_2"])

      const messages = yield* rm.vpageMessages(tenant, "101_1", { limit: 2 })
      assert.deepStrictEqual(messages.items.map((m) => m.message), ["hello", "price?"], "in the order written (ms times)")
      assert.deepStrictEqual((yield* rm.vpageMessages(tenant, "101_1", { after: messages.next })).items.map((m) => m.id), ["m_3"])

      const customer = (yield* rm.vpageCustomers(tenant, { pageId: "101" })).items[0]!
      assert.deepStrictEqual([customer.name, customer.phones, customer.emails], ["Lan", ["0912345678"], []])
      assert.strictEqual((yield* rm.documents(tenant, "conversation")).items.length, 0, "typed rows, no document rows")
      assert.isTrue(Option.isSome(yield* rm.vpageConversation(tenant, "101_2")))
      assert.strictEqual((yield* rm.vpageConversations(otherTenant)).items.length, 0, "another tenant sees none")
    }).pipe(Effect.provide(layer(f)))
  })
})
