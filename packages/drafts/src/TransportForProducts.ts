/**
 * TransportForProducts: the shape a draft's `transport` must have before a product is evaluated
 * against it, and its strict parse, which lists every problem for the 412 (docs/products.md).
 * @since 0.1.0
 */
import * as Issue from "@waybill/core/Issue"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { JsonObject } from "./Draft.js"
import { PreconditionFailed } from "./DraftError.js"
import * as Iso3166 from "./Iso3166.js"
import { forEachCountry, pathOf } from "./internal/countries.js"
import { isObject } from "./internal/json.js"

/** How products are applied; `booking` when omitted. @since 0.1.0 */
export const ProductsMode = Schema.Literal("booking", "rfq").annotations({ identifier: "ProductsMode" })

/** @since 0.1.0 */
export type ProductsMode = typeof ProductsMode.Type

const NonEmptyString = Schema.String.pipe(Schema.minLength(1))
const ObjectOrArray = Schema.Union(JsonObject, Schema.Array(Schema.Unknown))

/** The parsed transport; keys beyond the table are kept as they are. @since 0.1.0 */
export const TransportForProducts = Schema.Struct(
  {
    template: JsonObject,
    shipperId: NonEmptyString,
    shipperTeamId: NonEmptyString,
    shipperUserId: NonEmptyString,
    order: JsonObject,
    shipments: Schema.Array(JsonObject),
    sharedShipment: JsonObject,
    tour: JsonObject,
    multiStopData: JsonObject,
    discoveredFields: ObjectOrArray,
    confirmedSections: ObjectOrArray,
    features: ObjectOrArray,
    properties: Schema.Struct(
      { shipmentsCreator: JsonObject, tourBar: JsonObject },
      Schema.Record({ key: Schema.String, value: Schema.Unknown })
    ),
    products: Schema.optional(Schema.Array(JsonObject)),
    productsMode: ProductsMode,
    shipperOffers: Schema.optional(Schema.Array(JsonObject)),
    smartInsights: Schema.optional(JsonObject)
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ identifier: "TransportForProducts" })

/** @since 0.1.0 */
export type TransportForProducts = typeof TransportForProducts.Type

/** One problem of the 412 message: `path` relative to the transport, array indices as numbers. @since 0.1.0 */
export interface ParseIssue {
  readonly path: ReadonlyArray<string | number>
  readonly message: string
}

type Check = (value: unknown) => string | undefined

const objectCheck: Check = (value) => (isObject(value) ? undefined : "must be an object")
const idCheck: Check = (value) =>
  typeof value === "string" && value.length > 0 ? undefined : "must be a non-empty string"
const objectOrArrayCheck: Check = (value) =>
  isObject(value) || Array.isArray(value) ? undefined : "must be an object or an array"
const productsModeCheck: Check = (value) =>
  value === "booking" || value === "rfq" ? undefined : 'must be "booking" or "rfq"'

const arrayOfObjects = (value: unknown, path: ReadonlyArray<string | number>, issues: Array<ParseIssue>): void => {
  if (!Array.isArray(value)) {
    issues.push({ path, message: "must be an array" })
    return
  }
  value.forEach((item, index) => {
    if (!isObject(item)) issues.push({ path: [...path, index], message: "must be an object" })
  })
}

const required: ReadonlyArray<readonly [key: string, check: Check | "arrayOfObjects"]> = [
  ["template", objectCheck],
  ["shipperId", idCheck],
  ["shipperTeamId", idCheck],
  ["shipperUserId", idCheck],
  ["order", objectCheck],
  ["shipments", "arrayOfObjects"],
  ["sharedShipment", objectCheck],
  ["tour", objectCheck],
  ["multiStopData", objectCheck],
  ["discoveredFields", objectOrArrayCheck],
  ["confirmedSections", objectOrArrayCheck],
  ["features", objectOrArrayCheck],
  ["properties", objectCheck]
]

const optional: ReadonlyArray<readonly [key: string, check: Check | "arrayOfObjects"]> = [
  ["products", "arrayOfObjects"],
  ["productsMode", productsModeCheck],
  ["shipperOffers", "arrayOfObjects"],
  ["smartInsights", objectCheck]
]

const checkKey = (
  value: unknown,
  path: ReadonlyArray<string | number>,
  check: Check | "arrayOfObjects",
  issues: Array<ParseIssue>
): void => {
  if (check === "arrayOfObjects") {
    arrayOfObjects(value, path, issues)
    return
  }
  const message = check(value)
  if (message !== undefined) issues.push({ path, message })
}

const countryMessage = (value: unknown): string | undefined => {
  if (value === null || Iso3166.isAlpha3(value)) return undefined
  if (typeof value !== "string") return 'must be an ISO 3166-1 alpha-3 country code (a string such as "DEU")'
  const upper = value.toUpperCase()
  if (Iso3166.isAlpha3(upper)) return `must be an ISO 3166-1 alpha-3 country code in upper case: "${upper}"`
  const alpha2 = Iso3166.fromAlpha2(upper)
  if (alpha2 !== undefined) {
    return `must be an ISO 3166-1 alpha-3 country code: ${JSON.stringify(value)} is alpha-2, use "${alpha2.alpha3}"`
  }
  return `must be an ISO 3166-1 alpha-3 country code: ${JSON.stringify(value)} is not one`
}

/**
 * An issue for every `country` / `countryCode` property anywhere in a value that is neither an
 * official ISO 3166-1 alpha-3 code nor `null`, in document order. Iterative and linear.
 * @since 0.1.0
 */
export const countryIssues = (root: unknown): Array<ParseIssue> => {
  const issues: Array<ParseIssue> = []
  forEachCountry(root, (value, node) => {
    const message = countryMessage(value)
    if (message !== undefined) issues.push({ path: pathOf(node), message })
    // A malformed code is reported once; nothing below it is a code to check.
    return message === undefined && typeof value === "object"
  })
  return issues
}

/**
 * Parses a draft's `transport` strictly (`null` as `{}`): the transport with `productsMode`
 * defaulted and `null` optional keys dropped, or every problem found.
 * @since 0.1.0
 */
export const parse = (transport: unknown): Either.Either<TransportForProducts, ReadonlyArray<ParseIssue>> => {
  const input = transport === null || transport === undefined ? {} : transport
  if (!isObject(input)) return Either.left([{ path: [], message: "must be an object" }])
  const issues: Array<ParseIssue> = []
  for (const [key, check] of required) {
    if (!Object.hasOwn(input, key)) issues.push({ path: [key], message: "is missing" })
    else checkKey(input[key], [key], check, issues)
  }
  const properties = input.properties
  if (isObject(properties)) {
    for (const key of ["shipmentsCreator", "tourBar"]) {
      if (!Object.hasOwn(properties, key)) issues.push({ path: ["properties", key], message: "is missing" })
      else checkKey(properties[key], ["properties", key], objectCheck, issues)
    }
  }
  const output: Record<string, unknown> = { ...input }
  for (const [key, check] of optional) {
    const value = Object.hasOwn(input, key) ? input[key] : undefined
    if (value === null || value === undefined) delete output[key]
    else checkKey(value, [key], check, issues)
  }
  output.productsMode ??= "booking"
  issues.push(...countryIssues(input))
  return issues.length > 0 ? Either.left(issues) : Either.right(output as TransportForProducts)
}

/** The 412 message: the contract's literal prefix followed by the serialised issues. @since 0.1.0 */
export const failureMessage = (issues: ReadonlyArray<ParseIssue>): string =>
  `TransportForProductsSchema parse failed: ${JSON.stringify(issues.map(({ path, message }) => ({ path, message })))}`

/** The 412 error: the contract message, and the same problems with paths from the request root. @since 0.1.0 */
export const preconditionFailed = (issues: ReadonlyArray<ParseIssue>): PreconditionFailed =>
  new PreconditionFailed({
    message: failureMessage(issues),
    issues: issues.map((issue) => Issue.make(Issue.joinPath("transport", ...issue.path), issue.message))
  })
