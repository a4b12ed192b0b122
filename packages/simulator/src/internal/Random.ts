/**
 * Seeded, allocation-free hashing. Every generated record is a pure function of
 * (seed, position, salt), so a 1,000,000-product business costs nothing until it is read.
 */

const fmix = (h: number): number => {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** A well-mixed unsigned 32-bit hash of three integers. */
export const hash3 = (a: number, b: number, c: number): number =>
  fmix(Math.imul(fmix(Math.imul(fmix(a ^ 0x9e3779b9), 31) ^ b), 31) ^ c)

/** A hash in [0, 1). */
export const unit = (h: number): number => h / 4294967296

/** FNV-1a over a string (cursor signatures, seeds from names). */
export const fnv1a = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** A seeded stream of numbers in [0, 1) (mulberry32). */
export const stream = (seed: number): () => number => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A deterministic lowercase hex string of `length` characters. */
export const hex = (next: () => number, length: number): string => {
  let out = ""
  while (out.length < length) out += Math.floor(next() * 4294967296).toString(16).padStart(8, "0")
  return out.slice(0, length)
}
