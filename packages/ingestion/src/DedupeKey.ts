/**
 * The dedupe key of a webhook record (docs/api-catalogue.md, Delivery rules 2: redeliveries
 * carry the same body, so its bytes are the key): a SHA-256 of the application id and the
 * body **as stored**, the verify token's value already replaced by `"[redacted]"`.
 *
 * The earlier recipe, `sha256:` over the bytes as received (token included, unsalted), let
 * anyone holding a key (an export, a log line) test token guesses offline. This one holds
 * nothing of the token. Anyone holding the stored body can compute it, so records written
 * under the earlier recipe can be re-keyed where they leave the server (`rekey`). A
 * redelivery under another valid token (during a rotation) is now the same delivery.
 */
import * as Crypto from "node:crypto"

export const PREFIX = "sha256-stored:"

/** The earlier recipe's prefix (token included): never published. */
export const LEGACY_PREFIX = "sha256:"

/** The key of a delivery of `appId` whose stored body is `stored` (bytes or its UTF-8 text). */
export const of = (appId: string, stored: Uint8Array | string): string =>
  `${PREFIX}${Crypto.hash("sha256", Buffer.concat([Buffer.from(`${appId}\n`), typeof stored === "string" ? Buffer.from(stored, "utf8") : stored]), "hex")}`

/**
 * A webhook record's key as it may be published: one of the earlier recipe is replaced by this
 * recipe over the stored body; any other key is returned as it is.
 */
export const rekey = (record: { readonly source: string; readonly appId: string; readonly body: string; readonly dedupeKey: string | null }): string | null =>
  record.source === "webhook" && record.dedupeKey !== null && record.dedupeKey.startsWith(LEGACY_PREFIX)
    ? of(record.appId, record.body)
    : record.dedupeKey
