/**
 * Seeded records: every record is a pure function of (seed, position), so any business starts
 * instantly and a simulator started with the same seed and epoch serves the same data.
 *
 * Orders and bills spread over `historyDays` before the epoch, so a client that reads only
 * the last 31 days, or a single 31-day window, misses some of them (docs/api-catalogue.md
 * §3.1, §5.1). Orders name existing products and customers; half the bills are the delivery
 * bills of orders (mode 1), the rest retail sales and supplier imports.
 */
import type { Bill, BillLine, Brand, CatalogOptions, Category, Customer, Order, OrderLine, Product } from "./CatalogRecords.ts"
import { CARRIERS, idBases, lineAmount, ORDER_STATUS, round2, SALE_CHANNELS } from "./Codes.ts"
import { hash3 } from "./internal/Random.ts"
import { Table } from "./Table.ts"

const YEAR_S = 365 * 24 * 3600
const DAY_MS = 24 * 3600 * 1000

const ADJECTIVES = ["Red", "Blue", "Green", "Black", "White", "Silver", "Golden", "Small", "Large", "Classic",
  "Organic", "Smart", "Vintage", "Fresh", "Deluxe", "Eco"]
const NOUNS = ["Shirt", "Mug", "Lamp", "Chair", "Phone", "Bottle", "Notebook", "Backpack", "Watch", "Speaker",
  "Kettle", "Jacket", "Pillow", "Towel", "Pen", "Basket"]
const PEOPLE = ["Nguyen Van An", "Tran Thi Binh", "Le Van Cuong", "Pham Thi Dung", "Hoang Van Em",
  "Vu Thi Giang", "Dang Van Hai", "Bui Thi Lan"]
const CATEGORIES = ["Clothing", "Kitchen", "Lighting", "Furniture", "Electronics", "Stationery", "Bags", "Home"]
const BRANDS = ["Sao Mai", "Hoa Sen", "Truong Son", "Ben Thanh", "Song Hong", "Lac Hong"]
const CATEGORY_COUNT = CATEGORIES.length
const BRAND_COUNT = BRANDS.length

/** Seeded order statuses, weighted towards finished orders as in a real shop. */
const STATUS_MIX: ReadonlyArray<number> = [
  ORDER_STATUS.new, ORDER_STATUS.confirming, ORDER_STATUS.confirmed, ORDER_STATUS.packing, ORDER_STATUS.inTransit,
  ORDER_STATUS.inTransit, ORDER_STATUS.success, ORDER_STATUS.success, ORDER_STATUS.success, ORDER_STATUS.success,
  ORDER_STATUS.customerCancelled, ORDER_STATUS.returned
]

export interface Tables {
  readonly products: Table<Product>
  readonly orders: Table<Order>
  readonly bills: Table<Bill>
  readonly customers: Table<Customer>
  readonly categories: Table<Category>
  readonly brands: Table<Brand>
}

export const mobileOf = (seed: number, salt: number, pos: number) => `09${String(hash3(seed, pos, salt) % 100000000).padStart(8, "0")}`

export const seedTables = (options: CatalogOptions): Tables => {
  const bases = idBases(options.bigIds)
  const seed = options.seed | 0
  const yearStart = options.epochMs - YEAR_S * 1000
  const historyS = Math.max(1, Math.round(options.historyDays * 86400))
  const deletedBelow = Math.floor(options.deletedRatio * 4294967296)
  const depots = options.depots.length > 0 ? options.depots : [1]
  /** A seeded instant within the history, before the epoch. */
  const past = (pos: number, salt: number) => options.epochMs - 1000 - (hash3(seed, pos, salt) % historyS) * 1000

  const categories = new Table<Category>(bases.category, CATEGORY_COUNT, (pos) => ({
    id: bases.category + BigInt(pos),
    parentId: 0,
    code: `CAT-${pos + 1}`,
    name: CATEGORIES[pos]!,
    order: pos + 1,
    status: 1
  }))
  const brands = new Table<Brand>(bases.brand, BRAND_COUNT, (pos) => ({
    id: bases.brand + BigInt(pos),
    code: `BR-${pos + 1}`,
    name: BRANDS[pos]!,
    status: 1,
    createdAtMs: yearStart + (hash3(seed, pos, 61) % YEAR_S) * 1000
  }))
  const products = new Table<Product>(bases.product, options.products, (pos) => {
    if (hash3(seed, pos, 1) < deletedBelow) return undefined
    const g = hash3(seed, pos, 2)
    const n = pos + 1
    const createdAtMs = yearStart + (hash3(seed, pos, 4) % YEAR_S) * 1000
    return {
      id: bases.product + BigInt(pos),
      appProductId: `P-${n}`,
      code: `SKU-${String(n).padStart(7, "0")}`,
      barcode: `20${String(pos).padStart(10, "0")}`,
      name: `${ADJECTIVES[g & 15]} ${NOUNS[(g >>> 4) & 15]} ${n}`,
      price: 1000 * (10 + (hash3(seed, pos, 3) % 990)),
      categoryId: Number(bases.category) + ((g >>> 8) % CATEGORY_COUNT),
      brandId: Number(bases.brand) + ((g >>> 12) % BRAND_COUNT),
      status: 1,
      createdAtMs,
      updatedAtMs: Math.min(options.epochMs - 1000, createdAtMs + (hash3(seed, pos, 5) % (90 * 86400)) * 1000)
    }
  })
  const customers = new Table<Customer>(bases.customer, options.customers, (pos) => {
    const h = hash3(seed, pos, 51)
    return {
      id: bases.customer + BigInt(pos),
      type: 1 + (h % 10 === 0 ? 1 : 0),
      code: `KH${String(pos + 1).padStart(6, "0")}`,
      name: `${PEOPLE[h % PEOPLE.length]} ${pos + 1}`,
      mobile: mobileOf(seed, 52, pos),
      email: `customer${pos + 1}@example.com`,
      gender: 1 + ((h >>> 4) % 2),
      address: `${1 + ((h >>> 8) % 200)} Le Loi, District ${1 + ((h >>> 16) % 12)}`,
      points: (h >>> 12) % 1000,
      totalAmount: 1000 * ((h >>> 6) % 50000),
      updatedAtMs: past(pos, 53)
    }
  })
  const productLine = (pos: number, k: number, salt: number): OrderLine | undefined => {
    if (options.products === 0) return undefined
    const productPos = hash3(seed, pos, salt + k) % options.products
    // Orders and bills are history: they quote the product as it was, not as it is now.
    const product = products.seededAt(productPos)
    const n = productPos + 1
    const price = product?.price ?? 1000 * (10 + (hash3(seed, productPos, 3) % 990))
    return {
      productId: bases.product + BigInt(productPos),
      code: product?.code ?? `SKU-${String(n).padStart(7, "0")}`,
      name: product?.name ?? `Product ${n}`,
      quantity: 1 + (hash3(seed, pos, salt + 10 + k) % 5),
      price,
      discount: hash3(seed, pos, salt + 20 + k) % 4 === 0 ? round2(price * 0.1) : 0
    }
  }
  const customerOf = (pos: number, salt: number) => {
    if (options.customers === 0) return { id: bases.customer, name: "Walk-in customer", mobile: "0900000000" }
    const cPos = hash3(seed, pos, salt) % options.customers
    const c = customers.seededAt(cPos)!
    return { id: c.id, name: c.name, mobile: c.mobile }
  }
  const orders = new Table<Order>(bases.order, options.orders, (pos) => {
    const h = hash3(seed, pos, 11)
    const lines: Array<OrderLine> = []
    for (let k = 0; k < 1 + (h % 3); k++) {
      const line = productLine(pos, k, 20)
      if (line !== undefined) lines.push(line)
    }
    const createdAtMs = past(pos, 12)
    const customer = customerOf(pos, 13)
    const total = round2(lines.reduce((sum, l) => sum + lineAmount(l), 0))
    const carrier = CARRIERS[(h >>> 20) % CARRIERS.length]!
    return {
      id: bases.order + BigInt(pos),
      appOrderId: `AO-${pos + 1}`,
      type: (h >>> 4) % 5 === 0 ? 2 : 1,
      status: STATUS_MIX[(h >>> 6) % STATUS_MIX.length]!,
      saleChannel: SALE_CHANNELS[(h >>> 10) % SALE_CHANNELS.length]!,
      depotId: depots[(h >>> 8) % depots.length]!,
      customerId: customer.id,
      customerName: customer.name,
      customerMobile: customer.mobile,
      lines,
      carrierId: carrier[0],
      shipFee: 1000 * (15 + ((h >>> 14) % 20)),
      transfer: (h >>> 24) % 3 === 0 ? total : 0,
      createdAtMs,
      updatedAtMs: Math.min(options.epochMs - 1000, createdAtMs + (hash3(seed, pos, 14) % (2 * 86400)) * 1000)
    }
  })
  const bills = new Table<Bill>(bases.bill, options.bills, (pos) => {
    const h = hash3(seed, pos, 31)
    const kind = h % 4
    // Half the bills are the delivery bills of orders: same depot, customer and lines.
    if (kind < 2 && options.orders > 0) {
      const orderPos = hash3(seed, pos, 32) % options.orders
      const order = orders.seededAt(orderPos)!
      return {
        id: bases.bill + BigInt(pos),
        orderId: order.id,
        depotId: order.depotId,
        type: 2,
        mode: 1,
        customerId: order.customerId,
        customerName: order.customerName,
        customerMobile: order.customerMobile,
        lines: order.lines.map((l) => billLine(l)),
        createdAtMs: Math.min(options.epochMs - 1000, order.createdAtMs + DAY_MS / 2)
      }
    }
    const lines: Array<BillLine> = []
    for (let k = 0; k < 1 + ((h >>> 4) % 3); k++) {
      const line = productLine(pos, k, 40)
      if (line !== undefined) lines.push(billLine(line))
    }
    const retail = kind !== 3
    const customer = retail ? customerOf(pos, 33) : undefined
    return {
      id: bases.bill + BigInt(pos),
      orderId: undefined,
      depotId: depots[(h >>> 8) % depots.length]!,
      type: retail ? 2 : 1,
      mode: retail ? 2 : 5,
      customerId: customer?.id,
      customerName: customer?.name ?? "",
      customerMobile: customer?.mobile ?? "",
      lines,
      createdAtMs: past(pos, 34)
    }
  })
  const billLine = (l: OrderLine): BillLine => {
    const productPos = Number(l.productId - bases.product)
    return { ...l, barcode: `20${String(productPos).padStart(10, "0")}` }
  }
  return { products, orders, bills, customers, categories, brands }
}
