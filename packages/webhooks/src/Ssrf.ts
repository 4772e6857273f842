/**
 * Server-side request forgery rules (contract §5): which webhook targets are refused (docs/internals.md).
 * @since 0.1.0
 */
import * as Option from "effect/Option"

/** Why an address is refused: the special-purpose block it lies in. @since 0.1.0 */
export type AddressCategory =
  | "unspecified"
  | "this-network"
  | "loopback"
  | "private"
  | "shared"
  | "link-local"
  | "metadata"
  | "ietf-protocol"
  | "documentation"
  | "benchmarking"
  | "reserved"
  | "broadcast"
  | "multicast"
  | "unique-local"
  | "site-local"
  | "discard"
  | "teredo"
  | "ipv4-compatible"
  | "translation-local"

const descriptions: Record<AddressCategory, string> = {
  unspecified: "the unspecified address",
  "this-network": "a 'this network' address (0.0.0.0/8)",
  loopback: "a loopback address",
  private: "a private address",
  shared: "a shared (carrier-grade NAT) address",
  "link-local": "a link-local address",
  metadata: "the link-local cloud metadata address",
  "ietf-protocol": "an IETF protocol assignment",
  documentation: "a documentation address",
  benchmarking: "a benchmarking address",
  reserved: "a reserved address",
  broadcast: "the broadcast address",
  multicast: "a multicast address",
  "unique-local": "a unique-local address",
  "site-local": "a site-local address",
  discard: "a discard-only address",
  teredo: "a Teredo address",
  "ipv4-compatible": "an IPv4-compatible IPv6 address",
  "translation-local": "a local-use IPv4/IPv6 translation address"
}

/** A short phrase for a category, for error messages ("a loopback address"). @since 0.1.0 */
export const describe = (category: AddressCategory): string => descriptions[category]

/** How an operator allows private targets, for the messages that refuse them. @since 0.1.0 */
export const allowPrivateTargetsHint = "WAYBILL_ALLOW_PRIVATE_TARGETS=true allows them, for development and tests only"

/** A parsed IP address: IPv4 as an unsigned 32-bit number, IPv6 as eight 16-bit groups. @since 0.1.0 */
export type IpAddress =
  | { readonly family: 4; readonly value: number }
  | { readonly family: 6; readonly groups: ReadonlyArray<number> }

const DECIMAL_OCTET = /^(?:0|[1-9][0-9]{0,2})$/

const parseIPv4 = (text: string): number | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (!DECIMAL_OCTET.test(part)) return undefined
    const octet = Number(part)
    if (octet > 255) return undefined
    value = value * 256 + octet
  }
  return value
}

const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/

const parseIPv6 = (input: string): ReadonlyArray<number> | undefined => {
  // A zone (`fe80::1%eth0`) names an interface, not part of the address.
  const zone = input.indexOf("%")
  const text = zone === -1 ? input : input.slice(0, zone)
  if (text.length === 0 || text.length > 45) return undefined
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const groupsOf = (part: string): Array<number> | undefined => {
    if (part === "") return []
    const out: Array<number> = []
    const pieces = part.split(":")
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = parseIPv4(piece)
        if (v4 === undefined) return undefined
        out.push(Math.floor(v4 / 65536), v4 % 65536)
      } else if (HEX_GROUP.test(piece)) {
        out.push(Number.parseInt(piece, 16))
      } else {
        return undefined
      }
    }
    return out
  }
  const head = groupsOf(halves[0]!)
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : []
  if (head === undefined || tail === undefined) return undefined
  // A dotted tail is only allowed at the very end.
  if (halves.length === 2 && halves[0]!.includes(".")) return undefined
  if (halves.length === 1) return head.length === 8 ? head : undefined
  const missing = 8 - head.length - tail.length
  if (missing < 1) return undefined
  return [...head, ...new Array<number>(missing).fill(0), ...tail]
}

/** Parses an IPv4 address (strict dotted decimal) or IPv6 (brackets, `::`, an IPv4 tail, a zone). @since 0.1.0 */
export const parseAddress = (text: string): Option.Option<IpAddress> => {
  const v4 = parseIPv4(text)
  if (v4 !== undefined) return Option.some({ family: 4, value: v4 })
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  if (!bare.includes(":")) return Option.none()
  const groups = parseIPv6(bare)
  return groups === undefined ? Option.none() : Option.some({ family: 6, groups })
}

/** Whether a host is an IP literal rather than a name. @since 0.1.0 */
export const isIpLiteral = (host: string): boolean => Option.isSome(parseAddress(host))

const ipv4 = (a: number, b: number, c: number, d: number) => ((a * 256 + b) * 256 + c) * 256 + d

interface Block4 {
  readonly base: number
  readonly bits: number
  readonly category: AddressCategory | "global"
}

const block4 = (a: number, b: number, c: number, d: number, bits: number, category: Block4["category"]): Block4 => ({
  base: ipv4(a, b, c, d),
  bits,
  category
})

// The first matching block wins, so exceptions and more specific blocks come first.
const blocks4: ReadonlyArray<Block4> = [
  block4(0, 0, 0, 0, 32, "unspecified"),
  block4(0, 0, 0, 0, 8, "this-network"),
  block4(10, 0, 0, 0, 8, "private"),
  block4(100, 64, 0, 0, 10, "shared"),
  block4(127, 0, 0, 0, 8, "loopback"),
  block4(169, 254, 169, 254, 32, "metadata"),
  block4(169, 254, 0, 0, 16, "link-local"),
  block4(172, 16, 0, 0, 12, "private"),
  // 192.0.0.0/24 is not global, except two anycast services the registry marks global.
  block4(192, 0, 0, 9, 32, "global"),
  block4(192, 0, 0, 10, 32, "global"),
  block4(192, 0, 0, 0, 24, "ietf-protocol"),
  block4(192, 0, 2, 0, 24, "documentation"),
  block4(192, 88, 99, 0, 24, "reserved"),
  block4(192, 168, 0, 0, 16, "private"),
  block4(198, 18, 0, 0, 15, "benchmarking"),
  block4(198, 51, 100, 0, 24, "documentation"),
  block4(203, 0, 113, 0, 24, "documentation"),
  block4(224, 0, 0, 0, 4, "multicast"),
  block4(255, 255, 255, 255, 32, "broadcast"),
  block4(240, 0, 0, 0, 4, "reserved")
]

const inBlock4 = (value: number, block: Block4) => {
  const size = 2 ** (32 - block.bits)
  return value >= block.base && value < block.base + size
}

const classify4 = (value: number): Option.Option<AddressCategory> => {
  for (const block of blocks4) {
    if (inBlock4(value, block)) return block.category === "global" ? Option.none() : Option.some(block.category)
  }
  return Option.none()
}

interface Block6 {
  readonly prefix: ReadonlyArray<number>
  readonly bits: number
  readonly category: AddressCategory | "global" | "embedded-96" | "embedded-6to4"
}

const block6 = (prefix: ReadonlyArray<number>, bits: number, category: Block6["category"]): Block6 => ({
  prefix,
  bits,
  category
})

const blocks6: ReadonlyArray<Block6> = [
  block6([0, 0, 0, 0, 0, 0, 0, 0], 128, "unspecified"),
  block6([0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback"),
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d: judged by the IPv4 address.
  block6([0, 0, 0, 0, 0, 0xffff, 0, 0], 96, "embedded-96"),
  block6([0, 0, 0, 0, 0xffff, 0, 0, 0], 96, "embedded-96"),
  block6([0, 0, 0, 0, 0, 0, 0, 0], 96, "ipv4-compatible"),
  // NAT64 well-known prefix: judged by the IPv4 address; the local-use prefix is never global.
  block6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96, "embedded-96"),
  block6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, "translation-local"),
  block6([0x100, 0, 0, 0, 0, 0, 0, 0], 64, "discard"),
  block6([0x100, 0, 0, 1, 0, 0, 0, 0], 64, "reserved"),
  // 2001::/23 is not global, except the assignments the registry marks global.
  block6([0x2001, 1, 0, 0, 0, 0, 0, 1], 128, "global"),
  block6([0x2001, 1, 0, 0, 0, 0, 0, 2], 128, "global"),
  block6([0x2001, 1, 0, 0, 0, 0, 0, 3], 128, "global"),
  block6([0x2001, 3, 0, 0, 0, 0, 0, 0], 32, "global"),
  block6([0x2001, 4, 0x112, 0, 0, 0, 0, 0], 48, "global"),
  block6([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28, "global"),
  block6([0x2001, 0x30, 0, 0, 0, 0, 0, 0], 28, "global"),
  block6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32, "teredo"),
  block6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48, "benchmarking"),
  block6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23, "ietf-protocol"),
  block6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, "documentation"),
  block6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16, "embedded-6to4"),
  block6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, "documentation"),
  block6([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16, "reserved"),
  block6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, "unique-local"),
  block6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "link-local"),
  block6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, "site-local"),
  block6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "multicast")
]

const inBlock6 = (groups: ReadonlyArray<number>, block: Block6) => {
  let bits = block.bits
  for (let i = 0; i < 8 && bits > 0; i++) {
    const take = Math.min(16, bits)
    const mask = (0xffff << (16 - take)) & 0xffff
    if ((groups[i]! & mask) !== (block.prefix[i]! & mask)) return false
    bits -= take
  }
  return true
}

const classify6 = (groups: ReadonlyArray<number>): Option.Option<AddressCategory> => {
  for (const block of blocks6) {
    if (!inBlock6(groups, block)) continue
    switch (block.category) {
      case "global":
        return Option.none()
      case "embedded-96":
        return classify4(groups[6]! * 65536 + groups[7]!)
      case "embedded-6to4":
        return classify4(groups[1]! * 65536 + groups[2]!)
      default:
        return Option.some(block.category)
    }
  }
  return Option.none()
}

/** The special-purpose block an IP address lies in, or none when it is globally reachable. @since 0.1.0 */
export const classify = (address: IpAddress): Option.Option<AddressCategory> =>
  address.family === 4 ? classify4(address.value) : classify6(address.groups)

/**
 * Why an address text is refused as a target, or none; text that is not an IP is refused (fail closed).
 * @since 0.1.0
 */
export const refusal = (address: string): Option.Option<AddressCategory> =>
  Option.match(parseAddress(address), {
    onNone: () => Option.some<AddressCategory>("reserved"),
    onSome: classify
  })

/** Whether an address text is refused as a webhook target. @since 0.1.0 */
export const isRefused = (address: string): boolean => Option.isSome(refusal(address))

/** Whether a host name is a `localhost` name (RFC 6761: always loopback), trailing dot or not. @since 0.1.0 */
export const isLocalhostName = (host: string): boolean => {
  const name = (host.endsWith(".") ? host.slice(0, -1) : host).toLowerCase()
  return name === "localhost" || name.endsWith(".localhost")
}

/** The host of a parsed URL as the resolver and the socket see it: IPv6 without brackets. @since 0.1.0 */
export const hostOf = (url: URL): string =>
  url.hostname.startsWith("[") && url.hostname.endsWith("]") ? url.hostname.slice(1, -1) : url.hostname
