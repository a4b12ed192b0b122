/**
 * Where a delivery comes from, and whether that source is allowed.
 *
 * docs/api-catalogue.md, Delivery rules 6: deliveries come from a published list of addresses that "may
 * be extended or changed", so the list is configuration (default: `Webhook.defaultSourceAddresses`)
 * and can be replaced while the receiver runs.
 *
 * Behind a reverse proxy the direct peer is the proxy. `X-Forwarded-For` is honoured only when
 * the direct peer is a trusted proxy, and then the client is the right-most address that is not
 * itself a trusted proxy: every hop appends, so anything left of the last trusted hop may be
 * forged by the client.
 */
import { Webhook } from "@ocs/protocol"
import * as Net from "node:net"

/** An address list: single addresses and CIDR ranges, IPv4 or IPv6. */
export interface AddressList {
  readonly has: (address: string) => boolean
  readonly entries: ReadonlyArray<string>
}

/** Strips an IPv4-mapped IPv6 prefix, brackets and an IPv4 port: the forms peers arrive in. */
export const normalize = (address: string): string => {
  let a = address.trim()
  if (a.startsWith("[")) {
    const end = a.indexOf("]")
    a = end === -1 ? a.slice(1) : a.slice(1, end)
  } else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d+$/.test(a)) {
    a = a.slice(0, a.lastIndexOf(":"))
  }
  if (a.toLowerCase().startsWith("::ffff:") && Net.isIPv4(a.slice(7))) a = a.slice(7)
  return a
}

/** Builds a list; throws a `TypeError` naming the entry that is neither an address nor a CIDR. */
export const makeList = (entries: ReadonlyArray<string>): AddressList => {
  const blocks = new Net.BlockList()
  for (const entry of entries) {
    const [base = "", bits] = entry.split("/")
    const address = normalize(base)
    const family = Net.isIPv4(address) ? "ipv4" : Net.isIPv6(address) ? "ipv6" : undefined
    const prefix = bits === undefined ? undefined : Number(bits)
    if (family === undefined || (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === "ipv4" ? 32 : 128)))) {
      throw new TypeError(`not an IP address or CIDR range: ${JSON.stringify(entry)}`)
    }
    if (prefix === undefined) blocks.addAddress(address, family)
    else blocks.addSubnet(address, prefix, family)
  }
  return {
    entries: [...entries],
    has: (raw) => {
      const address = normalize(raw)
      const family = Net.isIPv4(address) ? "ipv4" : Net.isIPv6(address) ? "ipv6" : undefined
      return family !== undefined && blocks.check(address, family)
    }
  }
}

/** The API reference's published source addresses. */
export const specList: ReadonlyArray<string> = Webhook.defaultSourceAddresses

export interface Source {
  /** The direct peer of the TCP connection. */
  readonly peer: string
  /** The address deliveries are judged by: the peer, or the client named by a trusted proxy. */
  readonly client: string
}

/**
 * Resolves the client address. `forwardedFor` is the raw `X-Forwarded-For` value (several
 * header lines joined by ", ", as Node does).
 */
export const resolve = (peer: string, forwardedFor: string | undefined, trustedProxies: AddressList | undefined): Source => {
  const direct = normalize(peer)
  if (forwardedFor === undefined || trustedProxies === undefined || !trustedProxies.has(direct)) {
    return { peer: direct, client: direct }
  }
  const hops = forwardedFor.split(",").map(normalize).filter((h) => h.length > 0)
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trustedProxies.has(hops[i]!)) return { peer: direct, client: hops[i]! }
  }
  // Every hop is a trusted proxy: the left-most is the closest we know to the origin.
  return { peer: direct, client: hops[0] ?? direct }
}
