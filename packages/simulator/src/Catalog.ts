/**
 * The records of one business as the simulator keeps them: products, stock per depot, orders,
 * bills, customers, depots, categories and brands (docs/api-catalogue.md §1, §2, §3, §5, §6).
 * They are written out in the documented v3 shapes by Views.ts; here they are the facts only.
 *
 * Seeded records are generated on demand (Seeds.ts, Table.ts); only mutations are stored.
 * Times are epoch milliseconds; the wire carries unix seconds.
 */
import { Effects } from "./Effects.ts"
import { hash3 } from "./internal/Random.ts"
import { seedTables, type Tables } from "./Seeds.ts"

export * from "./Codes.ts"
import type { Table } from "./Table.ts"

export { Table } from "./Table.ts"

export type { Bill, BillLine, Brand, CatalogOptions, Category, Customer, Order, OrderLine, Product, StockLevel } from "./CatalogRecords.ts"
import type { Bill, CatalogOptions, Customer, Order, Product, StockLevel } from "./CatalogRecords.ts"

/** Objects made by it carry the tables they are given as their own fields (`data.products`, ...). */
function WithTables(this: Tables, tables: Tables) {
  Object.assign(this, tables)
}

/** All the data of one business: its tables (seeded, see Seeds.ts) and the changes made since. */
/** One record of a deletion feed: the record deleted, when (ms), by whom (a user id). */
export interface Deletion {
  readonly id: bigint
  readonly atMs: number
  readonly byId: number
}

/** The user a deletion is credited to when the control call names none. */
export const DEFAULT_DELETED_BY = 7

export class BusinessData extends (WithTables as unknown as new(tables: Tables) => Tables) {
  readonly options: CatalogOptions
  /** Stock changes keyed by `${productPos}:${depotId}`. */
  readonly stockChanges = new Map<string, StockLevel>()
  stockVersion = 0
  /** appProductId -> position, for products added after seeding. */
  private readonly addedAppProductIds = new Map<string, number>()
  /** `${appId}|${appOrderId}` -> order id, for orders added through order/add. */
  private readonly appOrderIds = new Map<string, bigint>()
  /** mobile -> customer position, built on first use. */
  private mobiles: Map<string, number> | undefined
  /** What the write operations applied (control API: counted by key or marker). */
  readonly effects = new Effects()
  /**
   * Orders and bills deleted since the start, oldest first, with when and by whom: what
   * order/deleted and bill/deleted serve (docs/api-catalogue.md §3.3, §5.3). Seeded gaps are
   * records that never existed, not deletions.
   */
  readonly deletions: { readonly order: Array<Deletion>; readonly bill: Array<Deletion> } = { order: [], bill: [] }

  constructor(options: CatalogOptions) {
    super(seedTables(options))
    this.options = options
  }

  /** Stock of the product at `productPos` in a depot; undefined when the product is gone. */
  stockAt(productPos: number, depotId: number): StockLevel | undefined {
    const product = this.products.at(productPos)
    if (product === undefined) return undefined
    if (this.stockChanges.size > 0) {
      const changed = this.stockChanges.get(`${productPos}:${depotId}`)
      if (changed !== undefined) return changed
    }
    const remain = seededRemain(this.options.seed, productPos, depotId)
    return { productId: product.id, depotId, remain, holding: remain % 3, updatedAtMs: product.updatedAtMs }
  }

  hasAppProductId(appProductId: string): boolean {
    if (this.addedAppProductIds.has(appProductId)) return true
    const match = /^P-([1-9][0-9]*)$/.exec(appProductId)
    if (match === null) return false
    const pos = Number(match[1]) - 1
    if (pos >= this.products.seeded) return false
    const product = this.products.at(pos)
    return product !== undefined && product.appProductId === appProductId
  }

  addProduct(input: Omit<Product, "id" | "createdAtMs" | "updatedAtMs">, now: number): Product {
    const product = this.products.append((id) => ({ ...input, id, createdAtMs: now, updatedAtMs: now }))
    this.addedAppProductIds.set(product.appProductId, this.products.positions - 1)
    return product
  }

  updateProduct(id: bigint, changes: Partial<Pick<Product, "name" | "price" | "code" | "barcode" | "status">>, now: number): Product | undefined {
    return update(this.products, id, (p) => ({ ...p, ...changes, updatedAtMs: nextVersion(now, p.updatedAtMs) }))
  }

  deleteProduct(id: bigint): Product | undefined {
    return remove(this.products, id)
  }

  /** Sets the stock of a product in a depot; nothing is held any more (a counted stock). */
  setStock(productId: bigint, depotId: number, quantity: number, now: number): StockLevel | undefined {
    const pos = this.products.posOf(productId)
    if (pos === undefined || this.products.at(pos) === undefined) return undefined
    const level: StockLevel = { productId, depotId, remain: quantity, holding: 0, updatedAtMs: now }
    this.stockChanges.set(`${pos}:${depotId}`, level)
    this.stockVersion++
    return level
  }

  addOrder(input: Omit<Order, "id" | "createdAtMs" | "updatedAtMs">, now: number): Order {
    return this.orders.append((id) => ({ ...input, id, createdAtMs: now, updatedAtMs: now }))
  }

  /** The order an application added with this appOrderId (order/add refuses a second one). */
  orderOfApp(appId: string, appOrderId: string): bigint | undefined {
    return this.appOrderIds.get(`${appId}|${appOrderId}`)
  }

  addAppOrder(appId: string, input: Omit<Order, "id" | "createdAtMs" | "updatedAtMs">, now: number): Order {
    const order = this.addOrder(input, now)
    this.appOrderIds.set(`${appId}|${order.appOrderId}`, order.id)
    return order
  }

  updateOrder(
    id: bigint,
    changes: Partial<Pick<Order, "status" | "customerName" | "customerMobile" | "customerAddress" | "description" | "privateDescription" | "transfer">>,
    now: number
  ): Order | undefined {
    return update(this.orders, id, (o) => ({ ...o, ...changes, updatedAtMs: nextVersion(now, o.updatedAtMs) }))
  }

  /** Deletes an order; `at` (ms) and `by` (a user id) go to the deletion feed. */
  deleteOrder(id: bigint, at?: number, by = DEFAULT_DELETED_BY): Order | undefined {
    const order = remove(this.orders, id)
    if (order !== undefined && at !== undefined) this.deletions.order.push({ id: order.id, atMs: at, byId: by })
    return order
  }

  /** The live customer with this mobile. */
  customerByMobile(mobile: string): Customer | undefined {
    if (this.mobiles === undefined) {
      this.mobiles = new Map()
      for (let pos = 0; pos < this.customers.positions; pos++) {
        const c = this.customers.at(pos)
        if (c !== undefined && !this.mobiles.has(c.mobile)) this.mobiles.set(c.mobile, pos)
      }
    }
    const pos = this.mobiles.get(mobile)
    return pos === undefined ? undefined : this.customers.at(pos)
  }

  addCustomer(input: Omit<Customer, "id" | "updatedAtMs">, now: number): Customer {
    this.customerByMobile(input.mobile)
    const customer = this.customers.append((id) => ({ ...input, id, updatedAtMs: now }))
    this.mobiles!.set(customer.mobile, this.customers.positions - 1)
    return customer
  }

  updateCustomer(id: bigint, changes: Partial<Omit<Customer, "id" | "updatedAtMs" | "mobile">>, now: number): Customer | undefined {
    return update(this.customers, id, (c) => ({ ...c, ...changes, updatedAtMs: nextVersion(now, c.updatedAtMs) }))
  }

  addBill(input: Omit<Bill, "id" | "createdAtMs">, now: number): Bill {
    return this.bills.append((id) => ({ ...input, id, createdAtMs: now }))
  }

  /**
   * Moves a product's stock in a depot: `remain` (an import adds, an export or a sale takes
   * away) and `holding` (what orders hold until they are delivered or cancelled).
   */
  moveStock(productId: bigint, depotId: number, delta: { readonly remain?: number; readonly holding?: number }, now: number): StockLevel | undefined {
    const pos = this.products.posOf(productId)
    const current = pos === undefined ? undefined : this.stockAt(pos, depotId)
    if (pos === undefined || current === undefined) return undefined
    const level: StockLevel = {
      ...current,
      remain: current.remain + (delta.remain ?? 0),
      holding: Math.max(0, current.holding + (delta.holding ?? 0)),
      updatedAtMs: now
    }
    this.stockChanges.set(`${pos}:${depotId}`, level)
    this.stockVersion++
    return level
  }

  /** The service has no webhook for these: a deletion is found only by a pull (a silent delete). */
  deleteCustomer(id: bigint): Customer | undefined {
    this.mobiles = undefined
    return remove(this.customers, id)
  }

  /** Deletes a bill; `at` (ms) and `by` (a user id) go to the deletion feed. */
  deleteBill(id: bigint, at?: number, by = DEFAULT_DELETED_BY): Bill | undefined {
    const bill = remove(this.bills, id)
    if (bill !== undefined && at !== undefined) this.deletions.bill.push({ id: bill.id, atMs: at, byId: by })
    return bill
  }
}

/** Seeded stock of a product in a depot (0..499). */
export const seededRemain = (seed: number, productPos: number, depotId: number): number =>
  hash3(seed, productPos, 100 + depotId) % 500

/**
 * The updatedAt of a change: now, but at least the next whole second after the previous
 * change. `updatedAt` travels as unix seconds, and it is all a client has to order two
 * versions of a record that arrive out of order; two changes in one second would tie.
 */
const nextVersion = (now: number, previousMs: number): number => Math.max(now, Math.floor(previousMs / 1000) * 1000 + 1000)

const update = <R>(table: Table<R>, id: bigint, change: (current: R) => R): R | undefined => {
  const pos = table.posOf(id)
  const current = pos === undefined ? undefined : table.at(pos)
  if (pos === undefined || current === undefined) return undefined
  const next = change(current)
  table.set(pos, next)
  return next
}

const remove = <R>(table: Table<R>, id: bigint): R | undefined => {
  const pos = table.posOf(id)
  const current = pos === undefined ? undefined : table.at(pos)
  if (pos === undefined || current === undefined) return undefined
  table.set(pos, null)
  return current
}
