import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import * as Iso3166 from "../src/Iso3166.js"
import {
  countryIssues,
  failureMessage,
  type ParseIssue,
  parse,
  preconditionFailed,
  TransportForProducts
} from "../src/TransportForProducts.js"
import { productTransport } from "./fixtures.js"

const problems = (transport: unknown): ReadonlyArray<ParseIssue> =>
  Either.match(parse(transport), { onLeft: (issues) => issues, onRight: () => [] })

const requiredKeys = [
  "template",
  "shipperId",
  "shipperTeamId",
  "shipperUserId",
  "order",
  "shipments",
  "sharedShipment",
  "tour",
  "multiStopData",
  "discoveredFields",
  "confirmedSections",
  "features",
  "properties"
]

describe("TransportForProducts.parse", () => {
  it("accepts a complete transport and defaults productsMode to booking", () => {
    const parsed = Either.getOrThrow(parse(productTransport()))
    assert.strictEqual(parsed.productsMode, "booking")
    assert.strictEqual(parsed.shipperId, "shp_1")
  })

  it("keeps the given productsMode and optional keys; null optional keys count as omitted", () => {
    const parsed = Either.getOrThrow(
      parse({
        ...productTransport(),
        productsMode: "rfq",
        products: [{ id: "p" }],
        shipperOffers: null,
        smartInsights: {}
      })
    )
    assert.strictEqual(parsed.productsMode, "rfq")
    assert.deepStrictEqual(parsed.products, [{ id: "p" }])
    assert.isFalse("shipperOffers" in parsed)
    assert.deepStrictEqual(
      Either.getOrThrow(parse({ ...productTransport(), productsMode: null })).productsMode,
      "booking"
    )
  })

  it("reports each missing required key", () => {
    for (const key of requiredKeys) {
      const transport = productTransport()
      delete transport[key]
      assert.deepStrictEqual(problems(transport), [{ path: [key], message: "is missing" }], key)
    }
  })

  it("reports every missing key of an empty or absent transport", () => {
    for (const transport of [{}, null, undefined]) {
      assert.deepStrictEqual(
        problems(transport),
        requiredKeys.map((key) => ({ path: [key], message: "is missing" }))
      )
    }
  })

  it("refuses a transport that is not an object", () => {
    assert.deepStrictEqual(problems([1]), [{ path: [], message: "must be an object" }])
  })

  it("reports each malformed key, with array indices as numbers", () => {
    const transport = {
      ...productTransport(),
      template: "tpl",
      shipperId: "",
      shipperTeamId: 7,
      order: null,
      shipments: [{}, "s2", null],
      tour: [],
      confirmedSections: "order",
      properties: { shipmentsCreator: {} },
      productsMode: "instant",
      products: {},
      smartInsights: 1
    }
    assert.deepStrictEqual(problems(transport), [
      { path: ["template"], message: "must be an object" },
      { path: ["shipperId"], message: "must be a non-empty string" },
      { path: ["shipperTeamId"], message: "must be a non-empty string" },
      { path: ["order"], message: "must be an object" },
      { path: ["shipments", 1], message: "must be an object" },
      { path: ["shipments", 2], message: "must be an object" },
      { path: ["tour"], message: "must be an object" },
      { path: ["confirmedSections"], message: "must be an object or an array" },
      { path: ["properties", "tourBar"], message: "is missing" },
      { path: ["products"], message: "must be an array" },
      { path: ["productsMode"], message: 'must be "booking" or "rfq"' },
      { path: ["smartInsights"], message: "must be an object" }
    ])
  })

  it("checks properties' sub-objects", () => {
    assert.deepStrictEqual(problems({ ...productTransport(), properties: { shipmentsCreator: [], tourBar: null } }), [
      { path: ["properties", "shipmentsCreator"], message: "must be an object" },
      { path: ["properties", "tourBar"], message: "must be an object" }
    ])
    assert.deepStrictEqual(problems({ ...productTransport(), properties: "x" }), [
      { path: ["properties"], message: "must be an object" }
    ])
  })
})

describe("TransportForProducts: country codes", () => {
  it("accepts alpha-3 codes anywhere and null", () => {
    assert.deepStrictEqual(countryIssues({ a: [{ b: { country: "DEU", countryCode: "USA" } }], country: null }), [])
  })

  it("refuses alpha-2 codes and names the alpha-3 code", () => {
    const transport = productTransport()
    ;(transport.order as { customer: { address: { countryCode: string } } }).customer.address.countryCode = "DE"
    assert.deepStrictEqual(problems(transport), [
      {
        path: ["order", "customer", "address", "countryCode"],
        message: 'must be an ISO 3166-1 alpha-3 country code: "DE" is alpha-2, use "DEU"'
      }
    ])
  })

  it("refuses unknown codes, reserved codes, lower case and non-strings", () => {
    const transport = {
      ...productTransport(),
      shipments: [
        { pickup: { country: "XXX" }, delivery: { country: "deu" } },
        { pickup: { country: "XKX" }, delivery: { countryCode: 276 } },
        { pickup: { country: { code: "DEU" } }, delivery: { country: "" } }
      ]
    }
    assert.deepStrictEqual(problems(transport), [
      {
        path: ["shipments", 0, "pickup", "country"],
        message: 'must be an ISO 3166-1 alpha-3 country code: "XXX" is not one'
      },
      {
        path: ["shipments", 0, "delivery", "country"],
        message: 'must be an ISO 3166-1 alpha-3 country code in upper case: "DEU"'
      },
      {
        path: ["shipments", 1, "pickup", "country"],
        message: 'must be an ISO 3166-1 alpha-3 country code: "XKX" is not one'
      },
      {
        path: ["shipments", 1, "delivery", "countryCode"],
        message: 'must be an ISO 3166-1 alpha-3 country code (a string such as "DEU")'
      },
      {
        path: ["shipments", 2, "pickup", "country"],
        message: 'must be an ISO 3166-1 alpha-3 country code (a string such as "DEU")'
      },
      {
        path: ["shipments", 2, "delivery", "country"],
        message: 'must be an ISO 3166-1 alpha-3 country code: "" is not one'
      }
    ])
  })

  it("reports structural and country problems together, in one list", () => {
    const transport = productTransport()
    delete transport.shipperId
    transport.tour = { stops: [{ country: "AT" }] }
    assert.deepStrictEqual(
      problems(transport).map((issue) => issue.path),
      [["shipperId"], ["tour", "stops", 0, "country"]]
    )
  })

  it("walks deep nesting without overflowing the stack", () => {
    let deep: unknown = { country: "DE" }
    for (let i = 0; i < 100_000; i++) deep = { next: deep }
    assert.strictEqual(countryIssues(deep).length, 1)
  })

  it("checks the real list: every alpha-3 code passes, its alpha-2 code is refused", () => {
    for (const country of Iso3166.countries) {
      assert.deepStrictEqual(countryIssues({ country: country.alpha3 }), [])
      assert.strictEqual(countryIssues({ country: country.alpha2 }).length, 1)
    }
  })
})

describe("TransportForProducts: the 412", () => {
  it("formats the message exactly as contract §4", () => {
    const issues: ReadonlyArray<ParseIssue> = [
      { path: ["shipperId"], message: "is missing" },
      { path: ["shipments", 0, "country"], message: "x" }
    ]
    assert.strictEqual(
      failureMessage(issues),
      'TransportForProductsSchema parse failed: [{"path":["shipperId"],"message":"is missing"},{"path":["shipments",0,"country"],"message":"x"}]'
    )
  })

  it("builds the 412 error with dotted issues from the request root", () => {
    const error = preconditionFailed(problems({ ...productTransport(), shipperId: undefined, shipments: ["x"] }))
    assert.strictEqual(error._tag, "PreconditionFailed")
    assert.isTrue(error.message.startsWith("TransportForProductsSchema parse failed: "))
    assert.deepStrictEqual(JSON.parse(error.message.slice("TransportForProductsSchema parse failed: ".length)), [
      { path: ["shipperId"], message: "must be a non-empty string" },
      { path: ["shipments", 0], message: "must be an object" }
    ])
    assert.deepStrictEqual(error.issues, [
      { path: "transport.shipperId", message: "must be a non-empty string" },
      { path: "transport.shipments.0", message: "must be an object" }
    ])
  })
})

describe("TransportForProducts: the schema agrees with the parse", () => {
  const decodes = (value: unknown) => Either.isRight(Schema.decodeUnknownEither(TransportForProducts)(value))
  const mutation = fc.record({
    key: fc.constantFrom(...requiredKeys, "products", "productsMode", "shipperOffers", "smartInsights"),
    value: fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.string(),
      fc.constantFrom("booking", "rfq"),
      fc.integer(),
      fc.constant({}),
      fc.constant([]),
      fc.constant([{}]),
      fc.constant(["x"]),
      fc.constant({ shipmentsCreator: {}, tourBar: {} })
    )
  })

  it("on structure: both accept or both refuse", () => {
    fc.assert(
      fc.property(fc.array(mutation, { maxLength: 4 }), (mutations) => {
        const transport: Record<string, unknown> = productTransport()
        for (const { key, value } of mutations) {
          if (value === undefined) delete transport[key]
          else transport[key] = value
        }
        // The schema has no null-means-omitted for optional keys and no country check; both
        // are covered above, so compare the rest.
        const comparable = Object.fromEntries(Object.entries(transport).filter(([, value]) => value !== null))
        return Either.isRight(parse(transport)) === decodes({ productsMode: "booking", ...comparable })
      })
    )
  })
})
