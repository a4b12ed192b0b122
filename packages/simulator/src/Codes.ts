/**
 * Codes and sums shared by the seeds, the views and the control API: the documented enums
 * the simulator uses (docs/api-catalogue.md §3.2), id bases, and how lines add up.
 */

/** 2^53: ids at or above it cannot be represented exactly by a JavaScript number. */
export const TWO_POW_53 = 9007199254740992n

/** docs/api-catalogue.md §3.2 `info.status`. */
export const ORDER_STATUS = {
  packed: 40,
  packing: 42,
  awaitingPickup: 43,
  new: 54,
  confirming: 55,
  confirmed: 56,
  awaitingCustomer: 57,
  carrierCancelled: 58,
  inTransit: 59,
  success: 60,
  failed: 61,
  customerCancelled: 63,
  systemCancelled: 64,
  outOfStock: 68,
  returning: 71,
  returned: 72
} as const
export const ORDER_STATUSES: ReadonlyArray<number> = Object.values(ORDER_STATUS)

/** §3.2 `channel.saleChannel` values the seeds use: Admin, Website, API, Facebook, Shopee, Tiktok Shop. */
export const SALE_CHANNELS: ReadonlyArray<number> = [1, 2, 10, 20, 42, 48]
/** §3.2 `carrier.id` values the seeds use, with their names. */
export const CARRIERS: ReadonlyArray<readonly [number, string]> = [[2, "Viettel Post"], [5, "GHN"], [8, "GHTK"], [24, "J&T"]]

export const idBases = (bigIds: boolean) => ({
  product: bigIds ? TWO_POW_53 + 1n : 100001n,
  order: bigIds ? TWO_POW_53 + 500000001n : 500001n,
  bill: bigIds ? TWO_POW_53 + 800000001n : 800001n,
  customer: bigIds ? TWO_POW_53 + 700000001n : 700001n,
  category: 1001n,
  brand: 2001n
})

export const round2 = (n: number) => Math.round(n * 100) / 100

/** What an order line or a bill line is worth: quantity × (price − discount). */
export const lineAmount = (l: { readonly quantity: number; readonly price: number; readonly discount: number }) =>
  round2(l.quantity * (l.price - l.discount))

export const orderTotal = (o: { readonly lines: ReadonlyArray<{ readonly quantity: number; readonly price: number; readonly discount: number }> }) => round2(o.lines.reduce((sum, l) => sum + lineAmount(l), 0))

