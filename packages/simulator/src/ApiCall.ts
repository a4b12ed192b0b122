/**
 * One API call in flight and how it is answered: every answer goes through `finish`, which
 * sends it and records it in the call log; `failure` writes the envelope of an error (HTTP 200
 * by default, docs/api-catalogue.md, "HTTP status codes returned with failures: not shown").
 */
import type * as Http from "node:http"
import type * as Json from "@ocs/protocol/Json"
import type { Registry } from "./Auth.ts"
import type { CallLog } from "./CallLog.ts"
import type { Faults } from "./Faults.ts"
import { send } from "./internal/Http.ts"
import type { Family } from "./Operations.ts"
import type { RateLimiter } from "./RateLimits.ts"
import type { Webhooks } from "./Webhooks.ts"

export interface ApiEnv {
  readonly registry: Registry
  readonly limiter: RateLimiter
  readonly calls: CallLog
  readonly faults: Faults
  readonly webhooks: Webhooks
  readonly now: () => number
  readonly cursorSecret: string
  /** Switches a test turns while the simulator runs (control API `/_sim/settings`). */
  readonly settings: ApiSettings
  readonly errorHttpStatus: { readonly [errorCode: string]: number }
}

/**
 * How failures write `messages` (docs/api-catalogue.md §11): "default" as each check words
 * it (a string, or a field map for field errors), or always one of the documented forms.
 */
export type MessagesForm = "default" | "string" | "array" | "object"
export const messagesForms: ReadonlyArray<MessagesForm> = ["default", "string", "array", "object"]

export interface ApiSettings {
  /**
   * Strict mode (docs/api-catalogue.md, "Simulator leniency"): today's refusals, for the
   * engine's own tests. Off (the default), the simulator accepts what the real service is
   * recorded to accept: null filters, unknown filters, ids as strings, customer/list `id`,
   * a rebuilt `{"id": n}` cursor; and answers undocumented paths with an HTML 404.
   */
  strict: boolean
  /** Refuse cursors that are JSON-equal to the issued one but not the same text. */
  strictCursors: boolean
  messagesForm: MessagesForm
  /** product/add with an appProductId already used: refused (default) or a second product created. */
  appProductIdDuplicates: "refuse" | "accept"
}

/** Field path -> message, as `messages` of ERR_INVALID_FORM_FIELDS. */
export type Messages = Record<string, string>

export type Obj = { readonly [key: string]: Json.JsonValue }
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v)

export interface Call {
  readonly env: ApiEnv
  readonly res: Http.ServerResponse
  readonly started: number
  readonly appId: string | null
  readonly businessId: string | null
  readonly family: Family
  readonly operation: string
  readonly path: string
  readonly locked: boolean
  readonly rateKey: string | undefined
}


/** Records the call in the call log (also for calls a fault answers by cutting the socket). */
export const logCall = (call: Call, status: number, outcome: string): void => {
  call.env.calls.add({
    at: call.started,
    appId: call.appId,
    businessId: call.businessId,
    family: call.family,
    operation: call.operation,
    path: call.path,
    outcome,
    status,
    locked: call.locked,
    durationMs: call.env.now() - call.started
  })
}

export const finish = (call: Call, status: number, outcome: string, body: string, contentType?: string): void => {
  send(call.res, status, body, contentType)
  logCall(call, status, outcome)
}

/** `messages` in the chosen form; a text that names no field is keyed "error" in a map. */
export const formMessages = (messages: string | Messages, form: MessagesForm): string | ReadonlyArray<string> | Messages => {
  const texts = typeof messages === "string" ? [messages] : Object.entries(messages).map(([k, v]) => `${k}: ${v}`)
  switch (form) {
    case "default":
      return messages
    case "string":
      return texts.join("; ")
    case "array":
      return texts
    case "object":
      return typeof messages === "string" ? { error: messages } : messages
  }
}

export const failure = (call: Call, errorCode: string, messages?: string | Messages, extra?: string): void => {
  const fault = call.env.faults.first("httpStatus", call, (f) => f.errorCode === undefined || f.errorCode === errorCode)
  const status = fault?.status ?? call.env.errorHttpStatus[errorCode] ?? 200
  const body = `{"code":0,"errorCode":${JSON.stringify(errorCode)}${
    messages === undefined ? "" : `,"messages":${JSON.stringify(formMessages(messages, call.env.settings.messagesForm))}`
  }${extra ?? ""}}`
  finish(call, status, errorCode, body)
}

