/**
 * The webhook events the simulator sends and their ids (docs/api-catalogue.md, §10 Webhooks). One home
 * for the names: the sender, the control API's input schemas and the control client use them.
 */

/**
 * The v3 events the simulator sends (docs/api-catalogue.md §10) and their ids: 101, 102, 110
 * and 202 are documented; the rest are ours. paymentReceived was v2 only and is not sent.
 * orderPartialReturn (added 2026-01-09) carries the order plus `originalOrder`; appUninstalled
 * carries no data.
 */
export const EVENT_IDS = {
  productAdd: 101,
  productUpdate: 102,
  productDelete: 103,
  inventoryChange: 110,
  orderAdd: 201,
  orderUpdate: 202,
  orderDelete: 203,
  orderPartialReturn: 204,
  appUninstalled: 901
} as const

export type EventName = keyof typeof EVENT_IDS
export const eventNames = Object.keys(EVENT_IDS) as ReadonlyArray<EventName>
