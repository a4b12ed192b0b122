/**
 * Control routes for the v3 webhook shapes the simple data changes (ControlData.ts) do not
 * make (docs/api-catalogue.md §10): several products deleted in one `productDelete`, an
 * `orderPartialReturn` (the order plus `originalOrder`), `appUninstalled` (no data, to the app
 * removed), and a combo sold: one `inventoryChange` carrying the combo and each of its parts,
 * every item with its `depots[]`. A shape the reference does not document is sent raw with
 * `POST /_sim/events`.
 */
import type { Business } from "./Auth.ts"
import { ComboSale, PartialReturn, ProductIds, Uninstall } from "./ControlWire.ts"
import { big, ControlError, decode, findBusiness, idOf } from "./ControlRequest.ts"
import { route, type Route } from "./ControlRouter.ts"
import { messageCount, pageWorld } from "./PageService.ts"
import { inventoryChangeView, orderView } from "./Views.ts"
import type { World } from "./World.ts"

/**
 * The `typeId` a combo item carries in our inventoryChange (ours: the reference shows the field
 * without listing its values).
 */
export const COMBO_TYPE_ID = 3

const silent = (query: URLSearchParams): boolean => query.get("silent") === "true"

const emit = (world: World, b: Business, event: Parameters<World["webhooks"]["emit"]>[1], data: unknown, query: URLSearchParams, onlyApp?: string) =>
  silent(query) ? 0 : world.webhooks.emit(b.businessId, event, data, onlyApp)

export const shapes: ReadonlyArray<Route> = [
  // The page service: a page whose access expired answers ERR_PAGE_EXPIRED (docs/api-catalogue.md §9).
  route("POST", "/_sim/businesses/:businessId/pages/:pageId/expire", (world, _req, [bid, pageId]) => {
    const b = findBusiness(world, bid)
    const pages = pageWorld(b)
    const page = pages.page(pageId!)
    if (page === undefined) throw new ControlError(404, `no page ${pageId}`)
    pages.expired.set(String(page.id), world.now() - 1)
    return { pageId: String(page.id), expiredAt: Math.floor((world.now() - 1) / 1000) }
  }),
  // A customer writes to a conversation: its update time moves (incremental reads find it).
  route("POST", "/_sim/businesses/:businessId/conversations/:conversationId/messages", (world, _req, [bid, cid]) => {
    const b = findBusiness(world, bid)
    const pages = pageWorld(b)
    const conversation = pages.conversation(cid!)
    if (conversation === undefined) throw new ControlError(404, `no conversation ${cid}`)
    pages.send(conversation, world.now())
    return { conversationId: String(conversation.id), updatedAt: Math.floor(conversation.updatedAtMs / 1000), messages: messageCount(conversation) }
  }),
  route("POST", "/_sim/businesses/:businessId/products/delete", (world, req, [bid]) => {
    const b = findBusiness(world, bid)
    const { ids } = decode(ProductIds, req.body)
    if (ids.length === 0) throw new ControlError(400, "ids: must not be empty")
    const deleted = ids.map((raw, i) => {
      const product = b.data.deleteProduct(big(idOf(raw, `ids.${i}`)))
      if (product === undefined) throw new ControlError(404, `ids.${i}: no product ${String(raw)}`)
      return product.id
    })
    return { products: deleted, queued: emit(world, b, "productDelete", deleted, req.query) }
  }),
  route("POST", "/_sim/businesses/:businessId/orders/:id/partial-return", (world, req, [bid, oid]) => {
    const b = findBusiness(world, bid)
    const input = decode(PartialReturn, req.body)
    const id = big(idOf(oid, "orderId"))
    const before = b.data.orders.get(id)
    if (before === undefined) throw new ControlError(404, `no order ${oid}`)
    const returned = input.products ?? [{ productId: before.lines[0]?.productId ?? 0n, quantity: 1 }]
    const order = b.data.updateOrder(id, {
      description: `partial return: ${returned.map((r) => `${String(r.productId)} x${r.quantity}`).join(", ")}`
    }, world.now())!
    // docs/api-catalogue.md §10: the order object plus originalOrder{id, channel{appOrderId, appShopId, saleChannel}}.
    const view = orderView(order)
    const data = {
      ...view,
      originalOrder: { id: order.id, channel: { appOrderId: order.appOrderId, appShopId: null, saleChannel: order.saleChannel } }
    }
    return { order: data, queued: emit(world, b, "orderPartialReturn", data, req.query) }
  }),
  route("POST", "/_sim/businesses/:businessId/uninstall", (world, req, [bid]) => {
    const b = findBusiness(world, bid)
    const { appId } = decode(Uninstall, req.body)
    return { queued: emit(world, b, "appUninstalled", undefined, req.query, idOf(appId, "appId")) }
  }),
  route("POST", "/_sim/businesses/:businessId/combos/sell", (world, req, [bid]) => {
    const b = findBusiness(world, bid)
    const sale = decode(ComboSale, req.body)
    if (!b.depots.includes(sale.depotId)) throw new ControlError(400, `depotId: unknown depot ${sale.depotId}`)
    if (sale.items.length === 0) throw new ControlError(400, "items: must not be empty")
    const comboId = big(idOf(sale.comboId, "comboId"))
    const combo = b.data.products.get(comboId)
    if (combo === undefined) throw new ControlError(404, `comboId: no product ${String(sale.comboId)}`)
    const now = world.now()
    const parts = sale.items.map((item, i) => {
      const productId = big(idOf(item.productId, `items.${i}.productId`))
      const level = b.data.moveStock(productId, sale.depotId, { remain: -item.quantity * sale.quantity }, now)
      if (level === undefined) throw new ControlError(404, `items.${i}.productId: no product ${String(item.productId)}`)
      return { productId, quantity: item.quantity }
    })
    const partViews = parts.map((p) => inventoryChangeView(b.data, b.data.products.get(p.productId)!, b.depots))
    // The combo's own stock: as many combos as its scarcest part allows, per depot. It is kept,
    // so a later product/inventory read serves what the webhook said (a pull after the webhook
    // must not bring the old level back).
    for (const depotId of b.depots) {
      const remain = Math.min(...parts.map((p, i) => Math.floor((partViews[i]!.depots.find((x) => x.id === depotId)?.remain ?? 0) / p.quantity)))
      b.data.setStock(comboId, depotId, remain, now)
    }
    const comboItem = {
      ...inventoryChangeView(b.data, combo, b.depots),
      typeId: COMBO_TYPE_ID,
      comboItems: parts.map((p) => ({ id: p.productId, quantity: p.quantity }))
    }
    const items = [comboItem, ...partViews]
    return { products: items, queued: emit(world, b, "inventoryChange", items, req.query) }
  })
]
