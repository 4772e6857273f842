import { assert, describe, it } from "@effect/vitest"
import * as Option from "effect/Option"
import * as fc from "fast-check"
import * as Ssrf from "../src/Ssrf.js"

const category = (address: string) => Option.getOrUndefined(Ssrf.refusal(address))

describe("Ssrf", () => {
  it("parses IPv4 strictly and IPv6 in every written form", () => {
    assert.deepStrictEqual(
      Ssrf.parseAddress("192.168.1.2"),
      Option.some<Ssrf.IpAddress>({ family: 4, value: 0xc0a80102 })
    )
    for (const bad of ["1.2.3", "1.2.3.4.5", "01.2.3.4", "256.1.1.1", "1.2.3.-1", "a.b.c.d", "", "1..2.3"]) {
      assert.isTrue(Option.isNone(Ssrf.parseAddress(bad)), bad)
    }
    const v6 = (groups: ReadonlyArray<number>) => Option.some<Ssrf.IpAddress>({ family: 6, groups })
    const loopback = v6([0, 0, 0, 0, 0, 0, 0, 1])
    assert.deepStrictEqual(Ssrf.parseAddress("::1"), loopback)
    assert.deepStrictEqual(Ssrf.parseAddress("[::1]"), loopback)
    assert.deepStrictEqual(Ssrf.parseAddress("0:0:0:0:0:0:0:1"), loopback)
    assert.deepStrictEqual(Ssrf.parseAddress("0000:0000::0001"), loopback)
    assert.deepStrictEqual(Ssrf.parseAddress("::ffff:127.0.0.1"), v6([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]))
    assert.deepStrictEqual(Ssrf.parseAddress("fe80::1%eth0"), v6([0xfe80, 0, 0, 0, 0, 0, 0, 1]))
    for (const bad of [":::", "1::2::3", "1:2:3:4:5:6:7:8:9", "12345::", "::g", "1:2:3:4:5:6:7", "1.2.3.4::"]) {
      assert.isTrue(Option.isNone(Ssrf.parseAddress(bad)), bad)
    }
  })

  it("refuses every IPv4 special-purpose block and allows global addresses", () => {
    const refused: ReadonlyArray<readonly [string, Ssrf.AddressCategory]> = [
      ["0.0.0.0", "unspecified"],
      ["0.1.2.3", "this-network"],
      ["10.0.0.1", "private"],
      ["10.255.255.255", "private"],
      ["100.64.0.1", "shared"],
      ["100.127.255.255", "shared"],
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["169.254.169.254", "metadata"],
      ["169.254.0.1", "link-local"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["192.0.0.1", "ietf-protocol"],
      ["192.0.0.170", "ietf-protocol"],
      ["192.0.2.10", "documentation"],
      ["192.88.99.1", "reserved"],
      ["192.168.0.1", "private"],
      ["198.18.0.1", "benchmarking"],
      ["198.19.255.255", "benchmarking"],
      ["198.51.100.7", "documentation"],
      ["203.0.113.9", "documentation"],
      ["224.0.0.1", "multicast"],
      ["239.255.255.250", "multicast"],
      ["240.0.0.1", "reserved"],
      ["255.255.255.255", "broadcast"]
    ]
    for (const [address, expected] of refused) assert.strictEqual(category(address), expected, address)
    for (const allowed of [
      "1.1.1.1",
      "8.8.8.8",
      "93.184.215.14",
      "100.63.255.255",
      "100.128.0.0",
      "172.15.255.255",
      "172.32.0.0",
      "192.0.0.9",
      "192.0.0.10",
      "192.0.3.1",
      "192.169.0.1",
      "198.17.255.255",
      "198.20.0.0",
      "223.255.255.255"
    ]) {
      assert.isFalse(Ssrf.isRefused(allowed), allowed)
    }
  })

  it("refuses every IPv6 special-purpose block, judging embedded IPv4 by its own rules", () => {
    const refused: ReadonlyArray<readonly [string, Ssrf.AddressCategory]> = [
      ["::", "unspecified"],
      ["::1", "loopback"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["::ffff:169.254.169.254", "metadata"],
      ["::ffff:10.1.2.3", "private"],
      ["::ffff:0:192.168.1.1", "private"],
      ["::127.0.0.1", "ipv4-compatible"],
      ["64:ff9b::10.0.0.1", "private"],
      ["64:ff9b::7f00:1", "loopback"],
      ["64:ff9b:1::8.8.8.8", "translation-local"],
      ["100::1", "discard"],
      ["2001::1", "teredo"],
      ["2001:2::1", "benchmarking"],
      ["2001:10::1", "ietf-protocol"],
      ["2001:db8::1", "documentation"],
      ["2002:7f00:1::1", "loopback"],
      ["2002:a9fe:a9fe::", "metadata"],
      ["3fff::1", "documentation"],
      ["5f00::1", "reserved"],
      ["fc00::1", "unique-local"],
      ["fd00:ec2::254", "unique-local"],
      ["fe80::1", "link-local"],
      ["febf::1", "link-local"],
      ["fec0::1", "site-local"],
      ["ff02::1", "multicast"]
    ]
    for (const [address, expected] of refused) assert.strictEqual(category(address), expected, address)
    for (const allowed of [
      "2606:4700:4700::1111",
      "2a00:1450:4001::200e",
      "::ffff:8.8.8.8",
      "64:ff9b::8.8.8.8",
      "2002:808:808::1",
      "2001:1::1",
      "2001:3::1",
      "2001:4:112::1",
      "2001:20::1",
      "2620:4f:8000::1"
    ]) {
      assert.isFalse(Ssrf.isRefused(allowed), allowed)
    }
  })

  it("fails closed on text that is not an address", () => {
    assert.strictEqual(category("example.org"), "reserved")
    assert.strictEqual(category(""), "reserved")
  })

  it("recognises localhost names and reads URL hosts without brackets", () => {
    for (const name of ["localhost", "LOCALHOST", "localhost.", "api.localhost", "a.b.localhost."]) {
      assert.isTrue(Ssrf.isLocalhostName(name), name)
    }
    for (const name of ["localhost.example.org", "notlocalhost", "example.org"]) {
      assert.isFalse(Ssrf.isLocalhostName(name), name)
    }
    assert.strictEqual(Ssrf.hostOf(new URL("https://[::ffff:127.0.0.1]:8443/x")), "::ffff:7f00:1")
    assert.strictEqual(Ssrf.hostOf(new URL("https://0x7f.1/")), "127.0.0.1")
    assert.strictEqual(Ssrf.hostOf(new URL("https://2130706433/")), "127.0.0.1")
  })

  it("judges an IPv4-mapped address exactly as its IPv4 address (property)", () => {
    fc.assert(
      fc.property(fc.ipV4(), (address) => {
        const octets = address.split(".").map(Number)
        const hex = (high: number, low: number) => ((high << 8) | low).toString(16)
        const mapped = `::ffff:${hex(octets[0]!, octets[1]!)}:${hex(octets[2]!, octets[3]!)}`
        const nat64 = `64:ff9b::${address}`
        return (
          Ssrf.isRefused(`::ffff:${address}`) === Ssrf.isRefused(address) &&
          Ssrf.isRefused(mapped) === Ssrf.isRefused(address) &&
          Ssrf.isRefused(nat64) === Ssrf.isRefused(address)
        )
      })
    )
  })

  it("refuses every address of the private, loopback and link-local ranges (property)", () => {
    const inRange = (a: number, bits: number) =>
      fc.integer({ min: 0, max: 2 ** (32 - bits) - 1 }).map((offset) => {
        const value = a + offset
        return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".")
      })
    const ranges = fc.oneof(
      inRange(0x0a000000, 8),
      inRange(0x7f000000, 8),
      inRange(0xa9fe0000, 16),
      inRange(0xac100000, 12),
      inRange(0xc0a80000, 16),
      inRange(0x64400000, 10)
    )
    fc.assert(fc.property(ranges, (address) => Ssrf.isRefused(address)))
  })

  it("parses what Node's own parser accepts as IPv6, to the same groups (property)", () => {
    fc.assert(
      fc.property(fc.ipV6(), (address) => {
        const parsed = Ssrf.parseAddress(address)
        const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1)
        const again = Ssrf.parseAddress(canonical)
        return Option.isSome(parsed) && Option.isSome(again) && JSON.stringify(parsed) === JSON.stringify(again)
      })
    )
  })
})
