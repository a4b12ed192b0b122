/**
 * The write operations (docs/api-catalogue.md, "Write operations"), one module each, chosen
 * by the catalogue entry's kind. Every write checks all its fields first and answers
 * ERR_INVALID_FORM_FIELDS naming each one, stores nothing unless all pass, then applies its
 * effect to the business's data (records, stock, the effects ledger, webhooks) and answers
 * through WriteCall.ts.
 */
import type { WriteKind } from "@ocs/protocol/Catalogue"
import { billAddRetail } from "./WriteBillAddRetail.ts"
import type { WriteCall } from "./WriteCall.ts"
import { customerAdd } from "./WriteCustomerAdd.ts"
import { inventoryMove } from "./WriteInventoryMove.ts"
import { orderAdd } from "./WriteOrderAdd.ts"
import { orderEdit } from "./WriteOrderEdit.ts"
import { productAdd } from "./WriteProductAdd.ts"
import { productEdit } from "./WriteProductEdit.ts"

const handlers: { readonly [K in WriteKind]: (w: WriteCall) => void | Promise<void> } = {
  "product.add": productAdd,
  "product.edit": productEdit,
  "order.add": orderAdd,
  "order.edit": orderEdit,
  "customer.add": customerAdd,
  "bill.addRetail": billAddRetail,
  "inventory.importSupplier": inventoryMove,
  "inventory.exportSupplier": inventoryMove,
  "inventory.importOther": inventoryMove,
  "inventory.exportOther": inventoryMove
}

export const write = (w: Omit<WriteCall, "effectsFrom">): void | Promise<void> =>
  handlers[w.op.entry.kind]({ ...w, effectsFrom: w.business.data.effects.size })
