/**
 * What a failed pass means (docs/api-catalogue.md, Errors): what needs a person stops the
 * tenant, what concerns one resource pauses it, a cursor the service refused restarts the full
 * sync from the first page, and anything else is retried by the next pass.
 */

export type Action =
  | { readonly _tag: "HoldTenant"; readonly code: string; readonly message: string }
  | { readonly _tag: "PauseResource"; readonly code: string; readonly message: string }
  | { readonly _tag: "RestartFullSync"; readonly message: string }
  | { readonly _tag: "Retry"; readonly message: string }

/** The failure of a pass as the engine sees it: a tagged error, maybe with the API's errorCode. */
export interface Failure {
  readonly _tag: string
  readonly message?: string | undefined
}

const holdTenant = new Set(["InvalidAccessToken", "InvalidVersion", "BusinessNotEnableApi", "InvalidBusinessId", "InvalidAppId"])
// A page whose access expired (or that is not the business's) concerns the resources reading
// that page only: each page is its own resource (Operation.conversationList), so the others go on.
const pauseResource = new Set(["Forbidden", "InvalidDepotId", "PageExpired", "InvalidPageId"])

/** The errorCode the API answered (kept for the person), else the error's tag. */
export const codeOf = (error: Failure): string => "errorCode" in error ? String((error as { readonly errorCode: unknown }).errorCode) : error._tag

export const classify = (error: Failure): Action => {
  const message = error.message ?? error._tag
  const fields = (error as { readonly fields?: object }).fields ?? {}
  // The service refused a cursor it issued (expired, or damaged on its side): resuming from
  // it can never succeed.
  if (error._tag === "InvalidFormFields" && Object.keys(fields).some((f) => f.startsWith("paginator.next"))) {
    return { _tag: "RestartFullSync", message }
  }
  if (holdTenant.has(error._tag)) return { _tag: "HoldTenant", code: codeOf(error), message }
  if (pauseResource.has(error._tag)) return { _tag: "PauseResource", code: codeOf(error), message }
  return { _tag: "Retry", message }
}
