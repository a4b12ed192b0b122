/**
 * Secrets at rest: access tokens and verify tokens are stored encrypted (AES-256-GCM, a
 * fresh 96-bit nonce per value, the tag checked on read). The key comes from the
 * configuration or the environment; the demo generates one into its data folder.
 */
import { Redacted, Result, Schema } from "effect"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"

export class SecretError extends Schema.TaggedError<SecretError>()("SecretError", {
  message: Schema.String
}) {}

export interface Sealer {
  readonly seal: (plain: string) => string
  readonly open: (sealed: string) => Result.Result<Redacted.Redacted<string>, SecretError>
}

const PREFIX = "gcm1:"

/** Parses a 32-byte key written as base64 or hex. */
export const parseKey = (text: string): Result.Result<Buffer, SecretError> => {
  const t = text.trim()
  const buf = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, "hex") : Buffer.from(t, "base64")
  return buf.length === 32
    ? Result.succeed(buf)
    : Result.fail(new SecretError({ message: "encryption key must be 32 bytes (64 hex digits or base64)" }))
}

export const makeSealer = (key: Buffer): Sealer => ({
  seal: (plain) => {
    const iv = Crypto.randomBytes(12)
    const cipher = Crypto.createCipheriv("aes-256-gcm", key, iv)
    const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString("base64")
  },
  open: (sealed) => {
    if (!sealed.startsWith(PREFIX)) return Result.fail(new SecretError({ message: "not a sealed value" }))
    try {
      const raw = Buffer.from(sealed.slice(PREFIX.length), "base64")
      const decipher = Crypto.createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12))
      decipher.setAuthTag(raw.subarray(12, 28))
      const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
      return Result.succeed(Redacted.make(plain))
    } catch {
      return Result.fail(new SecretError({ message: "sealed value cannot be opened (wrong key or tampered)" }))
    }
  }
})

/**
 * The key: from `configured` (config or OCS_ENCRYPTION_KEY), else from `<dataDir>/secret.key`,
 * created with mode 0600 on first use.
 */
export const resolveKey = (configured: string | undefined, dataDir: string): Result.Result<{ key: Buffer; generated: boolean }, SecretError> => {
  if (configured !== undefined) return Result.map(parseKey(configured), (key) => ({ key, generated: false }))
  const file = Path.join(dataDir, "secret.key")
  if (Fs.existsSync(file)) return Result.map(parseKey(Fs.readFileSync(file, "utf8")), (key) => ({ key, generated: false }))
  const key = Crypto.randomBytes(32)
  Fs.mkdirSync(dataDir, { recursive: true })
  Fs.writeFileSync(file, key.toString("hex") + "\n", { mode: 0o600 })
  return Result.succeed({ key, generated: true })
}

/** Constant-time comparison of two secrets (of any lengths). */
export const safeEqual = (a: string, b: string): boolean =>
  Crypto.timingSafeEqual(Crypto.createHash("sha256").update(a).digest(), Crypto.createHash("sha256").update(b).digest())
