/**
 * The write operations the engine sends, as data (docs/api-catalogue.md, "Write operations"):
 * path, body form, items per call, the natural key the service keeps (if any), where a
 * command can leave a marker it can search for again, the fields the service refuses to go
 * without, and what the answer's `data` holds.
 */
import type { Certainty, FieldTree } from "./CatalogueEntry.ts"

/** The command kinds of the write path, one per operation. */
export type WriteKind =
  | "product.add"
  | "product.edit"
  | "order.add"
  | "order.edit"
  | "customer.add"
  | "bill.addRetail"
  | "inventory.importSupplier"
  | "inventory.exportSupplier"
  | "inventory.importOther"
  | "inventory.exportOther"

export interface WriteEntry {
  readonly kind: WriteKind
  readonly family: "pos"
  readonly resource: string
  readonly operation: string
  /** The permission (data page) of the token it needs. */
  readonly permission: string
  /** `array`: the body is a JSON array of items (at most `maxItems`); `object`: one object. */
  readonly body: "array" | "object"
  readonly maxItems?: number
  /** Most lines per call (`products[]` of an order or a bill). */
  readonly maxLines?: number
  /**
   * A key the caller chooses and the service stores, with the path it travels at in an item
   * and whether the service refuses a second item with the same key.
   */
  readonly naturalKey?: { readonly path: string; readonly scope: "appId" | "business"; readonly refusesDuplicates: boolean | "unknown" }
  /** A free-text field the list operation returns, where a command can leave a marker. */
  readonly marker?: { readonly path: string; readonly listedBy: string }
  /** Dotted paths of required fields (`products[].id` for each line). */
  readonly required: ReadonlyArray<string>
  /** The answer's `data`: one object, or one object per item (`[...]`). */
  readonly answer: FieldTree | readonly [FieldTree]
  readonly certainty: Certainty
}

export const writes: ReadonlyArray<WriteEntry> = [
  {
    kind: "product.add",
    family: "pos",
    resource: "product",
    operation: "add",
    permission: "product",
    body: "array",
    maxItems: 100,
    // The reference does not say whether a second appProductId is refused (§2.3).
    naturalKey: { path: "appProductId", scope: "business", refusesDuplicates: "unknown" },
    required: ["appProductId", "name"],
    answer: [{ id: "number", appProductId: "string", barcode: "string" }],
    certainty: "documented"
  },
  {
    kind: "product.edit",
    family: "pos",
    resource: "product",
    operation: "edit",
    permission: "product",
    body: "object",
    required: ["id"],
    // The answer's shape is not documented; the product's id is what a caller needs.
    answer: { id: "number" },
    certainty: "documented"
  },
  {
    kind: "order.add",
    family: "pos",
    resource: "order",
    operation: "add",
    permission: "order",
    body: "object",
    maxLines: 500,
    naturalKey: { path: "channel.appOrderId", scope: "appId", refusesDuplicates: true },
    marker: { path: "info.description", listedBy: "order/list" },
    required: ["channel.appOrderId", "shippingAddress.name", "shippingAddress.mobile", "products[].id", "products[].price", "products[].quantity"],
    answer: { id: "number", trackingUrl: "string", carrierCode: "string" },
    certainty: "documented"
  },
  {
    kind: "order.edit",
    family: "pos",
    resource: "order",
    operation: "edit",
    permission: "order",
    body: "object",
    required: ["info.id"],
    // The answer's shape is not documented; the order's id is what a caller needs.
    answer: { id: "number" },
    certainty: "documented"
  },
  {
    kind: "customer.add",
    family: "pos",
    resource: "customer",
    operation: "add",
    permission: "customer",
    body: "array",
    maxItems: 100,
    // The v1/v2 references key customers by mobile (a known mobile updates); v3 is silent.
    naturalKey: { path: "mobile", scope: "business", refusesDuplicates: false },
    required: ["name", "mobile"],
    answer: [{ id: "number", mobile: "string" }],
    certainty: "documented"
  },
  {
    kind: "bill.addRetail",
    family: "pos",
    resource: "bill",
    operation: "addretail",
    permission: "bill",
    body: "object",
    maxLines: 100,
    marker: { path: "description", listedBy: "bill/list" },
    required: ["depotId", "products[].id", "products[].quantity"],
    answer: { id: "number", totalAmount: "number" },
    certainty: "documented"
  },
  ...(["importSupplier", "exportSupplier", "importOther", "exportOther"] as const).map((name): WriteEntry => ({
    kind: `inventory.${name}`,
    family: "pos",
    resource: "inventory",
    operation: name.toLowerCase(),
    permission: "inventory",
    body: "object",
    maxLines: 100,
    marker: { path: "description", listedBy: "bill/list" },
    required: name.endsWith("Supplier")
      ? ["depotId", "supplierId", "products[].id", "products[].quantity"]
      : ["depotId", "products[].id", "products[].quantity"],
    answer: { id: "number", totalAmount: "number" },
    certainty: "documented"
  }))
]
