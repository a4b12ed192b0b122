import { assert, describe, it } from "@effect/vitest"
import { Operation } from "@ocs/protocol"
import { PageService } from "@ocs/sync"

describe("the page service's pages", () => {
  it("the grant's pageIds, else the configured pages, both: the configured ones within the grant; never others", () => {
    assert.deepStrictEqual(PageService.pagesOf({ pages: ["11", "12"], settings: {} }), ["11", "12"])
    assert.deepStrictEqual(PageService.pagesOf({ pages: [], settings: { pages: ["13"] } }), ["13"])
    assert.deepStrictEqual(PageService.pagesOf({ settings: { pages: ["13"] } }), ["13"])
    assert.deepStrictEqual(PageService.pagesOf({ pages: ["11", "12"], settings: { pages: ["12", "14"] } }), ["12"], "14 was not granted")
    assert.deepStrictEqual(PageService.readsOf({ settings: {} }), [], "no page: no page-service reads")

    const reads = PageService.readsOf({ pages: ["11", "12"], settings: {} })
    const keys = reads.map(Operation.resourceKey)
    // Every read names its pages: page/list by ids, conversations and customers a resource per page.
    assert.deepStrictEqual(keys, [
      'vpage:/v3.0/page/list?{"ids":["11","12"]}',
      "vpage:/v3.0/user/list",
      "vpage:/v3.0/conversation/tags",
      'vpage:/v3.0/conversation/list?{"pageIds":["11"]}',
      'vpage:/v3.0/customer/list?{"pageId":"11"}',
      'vpage:/v3.0/conversation/list?{"pageIds":["12"]}',
      'vpage:/v3.0/customer/list?{"pageId":"12"}'
    ])
  })
})
