/**
 * Seeded business data: products, inventory per depot, orders and payments.
 *
 * Nothing is materialised up front. Record `pos` of a table is derived from (seed, pos) on
 * demand; only mutations (updates, deletions, additions) are kept, in a map. A business of
 * 1,000,000 products therefore starts instantly and costs memory only for what changed.
 * Ids grow with the position, so "order by id" is "order by position".
 */
import { hash3, unit } from "./internal/Random.ts"

/** 2^53: ids at or above it cannot be represented exactly by a JavaScript number. */
export const TWO_POW_53 = 9007199254740992n

export interface CatalogOptions {
  readonly seed: number
  readonly products: number
  readonly orders: number
  readonly payments: number
  readonly depots: ReadonlyArray<number>
  /** Ids above 2^53 (written as JSON integer literals, never strings). */
  readonly bigIds: boolean
  /** Share of seeded products that are "already deleted" (gaps in the id sequence). */
  readonly deletedRatio: number
  /** Seeded updatedAt values lie within the year before this instant (ms). */
  readonly epochMs: number
}

export interface Product {
  readonly id: bigint
  readonly appProductId: string
  readonly code: string
  readonly barcode: string
  readonly name: string
  readonly price: number
  readonly updatedAtMs: number
}

export interface InventoryLevel {
  readonly productId: bigint
  readonly depotId: number
  readonly quantity: number
  readonly updatedAtMs: number
}

export interface OrderLine {
  readonly productId: bigint
  readonly quantity: number
  readonly price: number
}

export interface Order {
  readonly id: bigint
  readonly appOrderId: string
  readonly status: string
  readonly depotId: number
  readonly customerName: string
  readonly customerMobile: string
  readonly products: ReadonlyArray<OrderLine>
  readonly total: number
  readonly createdAtMs: number
  readonly updatedAtMs: number
}

export interface Payment {
  readonly id: bigint
  readonly orderId: bigint
  readonly amount: number
  readonly method: "bankTransfer" | "mobileWallet"
  readonly receivedAtMs: number
  readonly updatedAtMs: number
}

const YEAR_MS = 365 * 24 * 3600 * 1000

/**
 * One table: seeded records by position plus a map of changes. `null` in the map means
 * deleted. Positions at or past `seeded` exist only in the map (records added later).
 */
export class Table<R> {
  readonly base: bigint
  readonly seeded: number
  private readonly generate: (pos: number) => R | undefined
  readonly changes = new Map<number, R | null>()
  private appended = 0
  /** Bumped by every mutation; sorted indexes are rebuilt when it changes. */
  version = 0

  constructor(base: bigint, seeded: number, generate: (pos: number) => R | undefined) {
    this.base = base
    this.seeded = seeded
    this.generate = generate
  }

  get positions(): number {
    return this.seeded + this.appended
  }

  at(pos: number): R | undefined {
    if (this.changes.size > 0) {
      const changed = this.changes.get(pos)
      if (changed !== undefined) return changed ?? undefined
    }
    return pos < this.seeded ? this.generate(pos) : undefined
  }

  idAt(pos: number): bigint {
    return this.base + BigInt(pos)
  }

  posOf(id: bigint): number | undefined {
    const pos = id - this.base
    return pos >= 0n && pos < BigInt(this.positions) ? Number(pos) : undefined
  }

  get(id: bigint): R | undefined {
    const pos = this.posOf(id)
    return pos === undefined ? undefined : this.at(pos)
  }

  set(pos: number, record: R | null): void {
    this.changes.set(pos, record)
    this.version++
  }

  append(make: (id: bigint, pos: number) => R): R {
    const pos = this.positions
    this.appended++
    const record = make(this.idAt(pos), pos)
    this.set(pos, record)
    return record
  }

  /** Live records (scans every position: for counts in the control API, not the hot path). */
  count(): number {
    let n = 0
    for (let pos = 0; pos < this.positions; pos++) if (this.at(pos) !== undefined) n++
    return n
  }
}

const ADJECTIVES = ["Red", "Blue", "Green", "Black", "White", "Silver", "Golden", "Small", "Large", "Classic",
  "Organic", "Smart", "Vintage", "Fresh", "Deluxe", "Eco"]
const NOUNS = ["Shirt", "Mug", "Lamp", "Chair", "Phone", "Bottle", "Notebook", "Backpack", "Watch", "Speaker",
  "Kettle", "Jacket", "Pillow", "Towel", "Pen", "Basket"]
const CUSTOMERS = ["Nguyen Van An", "Tran Thi Binh", "Le Van Cuong", "Pham Thi Dung", "Hoang Van Em",
  "Ada Lovelace", "Grace Hopper", "Alan Turing"]
export const ORDER_STATUSES = ["new", "confirmed", "shipping", "completed", "cancelled"] as const

export const idBases = (bigIds: boolean) => ({
  product: bigIds ? TWO_POW_53 + 1n : 100001n,
  order: bigIds ? TWO_POW_53 + 500000001n : 500001n,
  payment: bigIds ? TWO_POW_53 + 900000001n : 900001n
})

const round2 = (n: number) => Math.round(n * 100) / 100

/** All the data of one business. */
export class BusinessData {
  readonly options: CatalogOptions
  readonly products: Table<Product>
  readonly orders: Table<Order>
  readonly payments: Table<Payment>
  /** Inventory changes keyed by `${productPos}:${depotId}`. */
  readonly inventoryChanges = new Map<string, InventoryLevel>()
  inventoryVersion = 0
  /** appProductId -> position, for products added after seeding. */
  private readonly addedAppProductIds = new Map<string, number>()

  constructor(options: CatalogOptions) {
    this.options = options
    const bases = idBases(options.bigIds)
    const seed = options.seed | 0
    const startMs = options.epochMs - YEAR_MS
    const deletedBelow = Math.floor(options.deletedRatio * 4294967296)
    this.products = new Table<Product>(bases.product, options.products, (pos) => {
      const h = hash3(seed, pos, 1)
      if (h < deletedBelow) return undefined
      const g = hash3(seed, pos, 2)
      const n = pos + 1
      return {
        id: bases.product + BigInt(pos),
        appProductId: `P-${n}`,
        code: `SKU-${String(n).padStart(7, "0")}`,
        barcode: `20${String(pos).padStart(10, "0")}`,
        name: `${ADJECTIVES[g & 15]} ${NOUNS[(g >>> 4) & 15]} ${n}`,
        price: round2(1 + (hash3(seed, pos, 3) % 99900) / 100),
        updatedAtMs: startMs + (hash3(seed, pos, 4) % 31536000) * 1000
      }
    })
    const depots = options.depots.length > 0 ? options.depots : [1]
    this.orders = new Table<Order>(bases.order, options.orders, (pos) => {
      const h = hash3(seed, pos, 11)
      const lines: Array<OrderLine> = []
      const count = 1 + (h % 3)
      for (let k = 0; k < count && options.products > 0; k++) {
        const productPos = hash3(seed, pos, 20 + k) % options.products
        const product = this.products.at(productPos)
        lines.push({
          productId: bases.product + BigInt(productPos),
          quantity: 1 + (hash3(seed, pos, 30 + k) % 5),
          price: product?.price ?? 10
        })
      }
      const createdAtMs = startMs + (hash3(seed, pos, 12) % 31536000) * 1000
      return {
        id: bases.order + BigInt(pos),
        appOrderId: `AO-${pos + 1}`,
        status: ORDER_STATUSES[h % ORDER_STATUSES.length]!,
        depotId: depots[(h >>> 8) % depots.length]!,
        customerName: CUSTOMERS[(h >>> 12) % CUSTOMERS.length]!,
        customerMobile: `09${String(hash3(seed, pos, 13) % 100000000).padStart(8, "0")}`,
        products: lines,
        total: round2(lines.reduce((sum, line) => sum + line.price * line.quantity, 0)),
        createdAtMs,
        updatedAtMs: createdAtMs + (hash3(seed, pos, 14) % 86400) * 1000
      }
    })
    this.payments = new Table<Payment>(bases.payment, options.payments, (pos) => {
      const h = hash3(seed, pos, 41)
      const orderPos = options.orders > 0 ? h % options.orders : 0
      const order = this.orders.at(orderPos)
      const receivedAtMs = (order?.updatedAtMs ?? startMs) + (hash3(seed, pos, 42) % 3600) * 1000
      return {
        id: bases.payment + BigInt(pos),
        orderId: bases.order + BigInt(orderPos),
        amount: order?.total ?? 0,
        method: (h >>> 16) % 2 === 0 ? "bankTransfer" : "mobileWallet",
        receivedAtMs,
        updatedAtMs: receivedAtMs
      }
    })
  }

  /** Stock of the product at `productPos` in a depot; undefined when the product is gone. */
  inventoryAt(productPos: number, depotId: number): InventoryLevel | undefined {
    const product = this.products.at(productPos)
    if (product === undefined) return undefined
    if (this.inventoryChanges.size > 0) {
      const changed = this.inventoryChanges.get(`${productPos}:${depotId}`)
      if (changed !== undefined) return changed
    }
    return {
      productId: product.id,
      depotId,
      quantity: hash3(this.options.seed, productPos, 100 + depotId) % 500,
      updatedAtMs: product.updatedAtMs
    }
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

  addProduct(input: Omit<Product, "id" | "updatedAtMs">, now: number): Product {
    const product = this.products.append((id) => ({ ...input, id, updatedAtMs: now }))
    this.addedAppProductIds.set(product.appProductId, this.products.positions - 1)
    return product
  }

  updateProduct(id: bigint, changes: Partial<Pick<Product, "name" | "price" | "code" | "barcode">>, now: number):
    Product | undefined
  {
    const pos = this.products.posOf(id)
    const current = pos === undefined ? undefined : this.products.at(pos)
    if (pos === undefined || current === undefined) return undefined
    const next: Product = { ...current, ...changes, updatedAtMs: Math.max(now, current.updatedAtMs + 1) }
    this.products.set(pos, next)
    return next
  }

  deleteProduct(id: bigint): Product | undefined {
    const pos = this.products.posOf(id)
    const current = pos === undefined ? undefined : this.products.at(pos)
    if (pos === undefined || current === undefined) return undefined
    this.products.set(pos, null)
    return current
  }

  setInventory(productId: bigint, depotId: number, quantity: number, now: number): InventoryLevel | undefined {
    const pos = this.products.posOf(productId)
    if (pos === undefined || this.products.at(pos) === undefined) return undefined
    const level: InventoryLevel = { productId, depotId, quantity, updatedAtMs: now }
    this.inventoryChanges.set(`${pos}:${depotId}`, level)
    this.inventoryVersion++
    return level
  }

  addOrder(input: Omit<Order, "id" | "createdAtMs" | "updatedAtMs" | "total">, now: number): Order {
    const total = round2(input.products.reduce((sum, line) => sum + line.price * line.quantity, 0))
    return this.orders.append((id) => ({ ...input, id, total, createdAtMs: now, updatedAtMs: now }))
  }

  updateOrder(id: bigint, changes: Partial<Pick<Order, "status" | "customerName" | "customerMobile">>, now: number):
    Order | undefined
  {
    const pos = this.orders.posOf(id)
    const current = pos === undefined ? undefined : this.orders.at(pos)
    if (pos === undefined || current === undefined) return undefined
    const next: Order = { ...current, ...changes, updatedAtMs: Math.max(now, current.updatedAtMs + 1) }
    this.orders.set(pos, next)
    return next
  }

  deleteOrder(id: bigint): Order | undefined {
    const pos = this.orders.posOf(id)
    const current = pos === undefined ? undefined : this.orders.at(pos)
    if (pos === undefined || current === undefined) return undefined
    this.orders.set(pos, null)
    return current
  }

  addPayment(input: Omit<Payment, "id" | "updatedAtMs" | "receivedAtMs">, now: number): Payment {
    return this.payments.append((id) => ({ ...input, id, receivedAtMs: now, updatedAtMs: now }))
  }
}

/** Chance that a seeded product is absent; exported for tests. */
export const isSeededDeleted = (options: CatalogOptions, pos: number): boolean =>
  unit(hash3(options.seed | 0, pos, 1)) < options.deletedRatio
