/**
 * How records look on the wire: the documented v3 shapes (docs/api-catalogue.md §1 depot,
 * §2.1 product/list, §2.2 product/inventory, category, brand, §3.1 order/list, §5.1
 * bill/list, §6 customer/list). Ids are bigints, written as JSON integer literals by
 * `@ocs/protocol/Json`; times are unix seconds; bill dates are `yyyy-mm-dd` in the service's
 * zone (UTC+7).
 *
 * Stock totals cover only the depots the token was granted (§2.1), so product views take
 * the depots to show.
 */
import { Operation } from "@ocs/protocol"
import type { Bill, BusinessData, Brand, Category, Customer, Order, Product, StockLevel } from "./Catalog.ts"
import { CARRIERS, lineAmount, orderTotal, round2 } from "./Catalog.ts"

/** Unix seconds of an instant in ms. */
export const unix = (ms: number): number => Math.floor(ms / 1000)

/** The service's calendar day of an instant. */
export const day = (ms: number): string => Operation.formatBound(ms, "date") as string

const stockEntry = (s: StockLevel) => ({
  remain: s.remain,
  shipping: 0,
  damaged: 0,
  holding: s.holding,
  transfering: 0,
  available: s.remain - s.holding,
  warranty: { remain: 0, holding: 0 }
})

/** A product's `inventory`: totals over `depots` and one entry per depot. */
export const inventoryOf = (data: BusinessData, pos: number, depots: ReadonlyArray<number>) => {
  let remain = 0
  let holding = 0
  const entries: Array<{ id: number } & ReturnType<typeof stockEntry>> = []
  for (const depot of depots) {
    const s = data.stockAt(pos, depot)
    if (s === undefined) continue
    remain += s.remain
    holding += s.holding
    entries.push({ id: depot, ...stockEntry(s) })
  }
  return { remain, shipping: 0, damaged: 0, holding, transfering: 0, available: remain - holding, warranty: { remain: 0, holding: 0 }, depots: entries }
}

const prices = (p: Product) => ({ retail: p.price, import: round2(p.price * 0.6), wholesale: round2(p.price * 0.85), old: p.price, avgCost: round2(p.price * 0.6) })

/** product/list record. */
export const productView = (data: BusinessData, p: Product, depots: ReadonlyArray<number>) => {
  const pos = data.products.posOf(p.id)
  return {
    id: p.id,
    parentId: -1,
    appProductId: p.appProductId,
    code: p.code,
    barcode: p.barcode,
    name: p.name,
    status: p.status,
    categoryId: p.categoryId,
    brandId: p.brandId,
    type: 1,
    prices: prices(p),
    inventory: pos === undefined ? inventoryOf(data, -1, []) : inventoryOf(data, pos, depots),
    createdAt: unix(p.createdAtMs),
    updatedAt: unix(p.updatedAtMs)
  }
}

/**
 * productAdd/productUpdate data: the product/detail shape the reference documents for them
 * (§10): `category{}` and `brand{}` objects beside the ids, stock of every depot.
 */
export const productEventView = (data: BusinessData, p: Product, depots: ReadonlyArray<number>) => {
  const category = data.categories.get(BigInt(p.categoryId))
  const brand = data.brands.get(BigInt(p.brandId))
  return {
    ...productView(data, p, depots),
    category: { id: p.categoryId, code: category?.code ?? "", name: category?.name ?? "" },
    brand: { id: p.brandId, name: brand?.name ?? "" }
  }
}

/** product/inventory record: a product's stock in the depots asked for. */
export const inventoryItemView = (data: BusinessData, p: Product, depots: ReadonlyArray<number>) => {
  const pos = data.products.posOf(p.id) ?? -1
  return { productId: p.id, barcode: p.barcode, name: p.name, prices: prices(p), inventory: inventoryOf(data, pos, depots) }
}

/** inventoryChange item (§10): the product's id and code, its totals and its depots. */
export const inventoryChangeView = (data: BusinessData, p: Product, depots: ReadonlyArray<number>) => {
  const pos = data.products.posOf(p.id) ?? -1
  return { id: p.id, typeId: 1, code: p.code, ...inventoryOf(data, pos, depots) }
}

/** order/list record (and orderAdd/orderUpdate data). */
export const orderView = (o: Order) => {
  const total = orderTotal(o)
  const carrier = CARRIERS.find(([id]) => id === o.carrierId) ?? CARRIERS[0]!
  return {
    info: {
      id: o.id,
      depotId: o.depotId,
      type: o.type,
      status: o.status,
      createdAt: unix(o.createdAtMs),
      updatedAt: unix(o.updatedAtMs),
      description: o.description ?? "",
      privateDescription: o.privateDescription ?? ""
    },
    channel: { appOrderId: o.appOrderId, saleChannel: o.saleChannel },
    shippingAddress: { id: o.customerId, name: o.customerName, mobile: o.customerMobile, address: o.customerAddress ?? "" },
    products: o.lines.map((l) => ({
      productId: l.productId,
      code: l.code,
      name: l.name,
      quantity: l.quantity,
      price: l.price,
      discount: l.discount,
      totalAmount: lineAmount(l)
    })),
    carrier: { id: carrier[0], name: carrier[1], shipFee: o.shipFee, codFee: 0, customerShipFee: o.shipFee },
    payment: {
      transfer: { amount: o.transfer },
      deposit: { amount: 0 },
      codAmount: round2(total + o.shipFee - o.transfer)
    }
  }
}

/** bill/list record. */
export const billView = (b: Bill) => {
  const amount = round2(b.lines.reduce((sum, l) => sum + lineAmount(l), 0))
  return {
    id: b.id,
    ...(b.orderId === undefined ? {} : { orderId: b.orderId }),
    depotId: b.depotId,
    date: day(b.createdAtMs),
    type: b.type,
    mode: b.mode,
    customer: b.customerId === undefined ? {} : { id: b.customerId, name: b.customerName, mobile: b.customerMobile },
    created: { id: 1, name: "admin", createdAt: unix(b.createdAtMs) },
    products: b.lines.map((l) => ({
      id: l.productId,
      code: l.code,
      barcode: l.barcode,
      name: l.name,
      quantity: l.quantity,
      price: l.price,
      discount: l.discount,
      amount: lineAmount(l)
    })),
    payment: { amount, customerAmount: amount, discount: 0, transfer: { amount: 0 }, cash: { amount } },
    ...(b.supplierId === undefined ? {} : { supplier: { id: b.supplierId, name: `Supplier ${b.supplierId}`, mobile: "" } }),
    description: b.description ?? ""
  }
}

/** customer/list record. */
export const customerView = (c: Customer) => ({
  id: c.id,
  type: c.type,
  name: c.name,
  mobile: c.mobile,
  code: c.code,
  gender: c.gender,
  address: c.address,
  email: c.email,
  points: c.points,
  totalAmount: c.totalAmount,
  level: { id: 1, name: "Member" },
  group: { id: 1, name: "Retail" },
  updatedAt: unix(c.updatedAtMs)
})

/** business/depot record, generated from the depot id. */
export const depotView = (id: number) => ({
  id,
  code: `KHO${id}`,
  name: `Depot ${id}`,
  mobile: `0280000000${id % 10}`,
  location: { cityId: 1, cityName: "Ha Noi", districtId: id, districtName: `District ${id}`, wardId: 100 + id, wardName: `Ward ${id}`, address: `${id} Tran Hung Dao` },
  locationV2: { cityId: 1, cityName: "Ha Noi", wardId: 100 + id, wardName: `Ward ${id}`, address: `${id} Tran Hung Dao` }
})

export const categoryView = (c: Category) => ({ id: c.id, parentId: c.parentId, code: c.code, name: c.name, order: c.order, image: "", content: "", status: c.status })

export const brandView = (b: Brand) => ({ id: b.id, code: b.code, name: b.name, status: b.status, parentId: 0, createdAt: unix(b.createdAtMs) })
