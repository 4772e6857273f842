/** The registration rules of `POST /webhooks` (contract §5) as one pure function (docs/internals.md). @since 0.1.0 */
import * as Issue from "@waybill/core/Issue"
import * as JsonInput from "@waybill/core/JsonInput"
import { type EventType, isEventType, notInCatalogue } from "@waybill/events/EventType"
import { filterFields } from "@waybill/events/FilterFields"
import type { PropertyDefinition } from "@waybill/events/PropertyDefinition"
import { validateFilter } from "@waybill/filters/Filter"
import * as StandardWebhooks from "@waybill/signing/StandardWebhooks"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ssrf from "./Ssrf.js"
import { isRecord, openObject, own } from "./service/jsonObject.js"
import {
  type Filters,
  limits,
  MASK,
  type OpenAuth,
  type Ordering,
  rateLimitBounds,
  type SealedAuth,
  secretFieldOf,
  secretLength
} from "./Webhook.js"

/** A registration that passed every rule; its secret is `Redacted`. @since 0.1.0 */
export interface Registration {
  readonly url: string
  readonly events: ReadonlyArray<EventType>
  readonly filters: Filters
  readonly auth: OpenAuth
  readonly description: string | null
  /** Both `undefined` when omitted: a registration's default, or an edit's stored value. */
  readonly rateLimitPerSecond: number | null | undefined
  readonly ordering: Ordering | undefined
}

/** What the rules depend on besides the request. @since 0.1.0 */
export interface RegistrationContext {
  readonly propertyDefinitions: ReadonlyArray<PropertyDefinition>
  readonly allowPrivateTargets: boolean
  /** Empty or omitted: the host name did not resolve, which is accepted (the sender checks). */
  readonly resolvedAddresses?: ReadonlyArray<string> | undefined
}

// Lengths are counted in characters (code points), as a person typing a secret counts them.
const lengthOf = (text: string): number => {
  let count = 0
  for (const _ of text) count++
  return count
}

const hasControl = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}

const hasSpaceOrControl = (text: string): boolean => hasControl(text) || /\s/.test(text)

const knownFields = new Set(["url", "events", "filters", "auth", "description", "rateLimitPerSecond", "ordering"])

const parseUrl = (value: string): URL | undefined => {
  try {
    return new URL(value)
  } catch {
    return undefined
  }
}

/**
 * The host name to resolve before validating: the URL's host, if it is a name (not an IP, not `localhost`).
 * @since 0.1.0
 */
export const hostToResolve = (input: unknown): Option.Option<string> => {
  const url = isRecord(input) ? own(input, "url") : undefined
  if (typeof url !== "string" || hasSpaceOrControl(url)) return Option.none()
  const parsed = parseUrl(url)
  if (parsed === undefined || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) return Option.none()
  const host = Ssrf.hostOf(parsed)
  return host === "" || Ssrf.isIpLiteral(host) || Ssrf.isLocalhostName(host) ? Option.none() : Option.some(host)
}

const refusedTarget = (what: string, category: Ssrf.AddressCategory, address: string) =>
  Issue.make(
    "url",
    `${what} ${Ssrf.describe(category)} (${address}): only globally reachable targets are allowed (${Ssrf.allowPrivateTargetsHint})`
  )

/** The URL rules alone (issues at `url`). @since 0.1.0 */
export const validateUrl = (value: unknown, context: RegistrationContext): Array<Issue.Issue> => {
  if (value === undefined) return [Issue.make("url", "is required")]
  if (typeof value !== "string") return [Issue.make("url", "must be a string")]
  if (value.length > limits.url) return [Issue.make("url", `must be at most ${limits.url} characters`)]
  // The URL parser silently drops tabs and new lines: refuse them, so the stored URL is the one called.
  if (hasSpaceOrControl(value)) {
    return [Issue.make("url", "must not contain white space or control characters")]
  }
  const url = parseUrl(value)
  if (url === undefined) return [Issue.make("url", "must be an absolute URL")]
  const issues: Array<Issue.Issue> = []
  if (url.protocol === "http:") {
    if (!context.allowPrivateTargets)
      issues.push(Issue.make("url", `must use https:// (http:// targets: ${Ssrf.allowPrivateTargetsHint})`))
  } else if (url.protocol !== "https:") {
    return [Issue.make("url", "must be an https:// URL")]
  }
  if (url.username !== "" || url.password !== "") {
    issues.push(Issue.make("url", "must not contain credentials; use auth instead"))
  }
  if (url.hash !== "" || value.includes("#")) {
    issues.push(Issue.make("url", "must not contain a fragment (#…)"))
  }
  const host = Ssrf.hostOf(url)
  if (host === "") return [...issues, Issue.make("url", "must name a host")]
  if (context.allowPrivateTargets) return issues
  const literal = Ssrf.parseAddress(host)
  if (Option.isSome(literal)) {
    const category = Ssrf.classify(literal.value)
    if (Option.isSome(category)) issues.push(refusedTarget("must not target", category.value, host))
  } else if (Ssrf.isLocalhostName(host)) {
    issues.push(refusedTarget("must not target", "loopback", host))
  } else {
    for (const address of context.resolvedAddresses ?? []) {
      const category = Ssrf.refusal(address)
      if (Option.isSome(category)) {
        issues.push(refusedTarget(`resolves to`, category.value, address))
        break
      }
    }
  }
  return issues
}

const validateEvents = (value: unknown): { issues: Array<Issue.Issue>; events: Array<EventType> | undefined } => {
  if (value === undefined) return { issues: [Issue.make("events", "is required")], events: undefined }
  if (!Array.isArray(value)) {
    return { issues: [Issue.make("events", "must be an array of event types")], events: undefined }
  }
  if (value.length === 0) return { issues: [Issue.make("events", "must list at least one event type")], events: [] }
  const issues: Array<Issue.Issue> = []
  const events: Array<EventType> = []
  const seen = new Map<string, number>()
  value.forEach((item: unknown, index) => {
    if (!isEventType(item)) {
      issues.push(Issue.make(`events.${index}`, notInCatalogue(item)))
      return
    }
    const first = seen.get(item)
    if (first !== undefined) {
      issues.push(Issue.make(`events.${index}`, `duplicates events.${first}`))
      return
    }
    seen.set(item, index)
    events.push(item)
  })
  return { issues, events }
}

const validateFilters = (
  value: unknown,
  subscribed: ReadonlySet<string> | undefined,
  definitions: ReadonlyArray<PropertyDefinition>
): { issues: Array<Issue.Issue>; filters: Filters } => {
  if (value === undefined) return { issues: [], filters: {} }
  if (!isRecord(value)) {
    return { issues: [Issue.make("filters", "must be an object keyed by subscribed event type")], filters: {} }
  }
  const issues: Array<Issue.Issue> = []
  const filters: Record<string, Filters[string]> = {}
  for (const key of Object.keys(value)) {
    const path = `filters.${key}`
    if (!isEventType(key)) {
      issues.push(Issue.make(path, notInCatalogue(key)))
      continue
    }
    if (subscribed !== undefined && !subscribed.has(key)) {
      issues.push(Issue.make(path, "is not one of the subscribed events"))
      continue
    }
    Either.match(validateFilter(value[key], filterFields(key, definitions)), {
      onLeft: (found) => issues.push(...Issue.prefix(found, path)),
      onRight: (filter) => {
        filters[key] = filter
      }
    })
  }
  return { issues, filters }
}

const authFields = {
  basic: ["type", "username", "password"],
  bearer: ["type", "token"],
  hmac: ["type", "secret", "scheme"]
} as const

// Checks a secret without ever putting its value into a message.
const checkSecret = (
  issues: Array<Issue.Issue>,
  path: string,
  value: unknown,
  bounds: { readonly min: number; readonly max: number },
  extra?: (text: string) => string | undefined
): string | undefined => {
  if (value === undefined) {
    issues.push(Issue.make(path, "is required"))
    return undefined
  }
  if (typeof value !== "string") {
    issues.push(Issue.make(path, "must be a string"))
    return undefined
  }
  const length = lengthOf(value)
  if (length < bounds.min || length > bounds.max) {
    issues.push(Issue.make(path, `must be ${bounds.min} to ${bounds.max} characters`))
    return undefined
  }
  const problem = extra?.(value)
  if (problem !== undefined) {
    issues.push(Issue.make(path, problem))
    return undefined
  }
  return value
}

const noControl = (text: string) => (hasControl(text) ? "must not contain control characters" : undefined)

/** The `auth` rules alone (issues at `auth.*`), also what a rotation's new `auth` must satisfy. @since 0.1.0 */
export const validateAuth = (value: unknown): { issues: Array<Issue.Issue>; auth: OpenAuth | undefined } => {
  if (value === undefined) return { issues: [Issue.make("auth", "is required")], auth: undefined }
  if (!isRecord(value)) {
    return { issues: [Issue.make("auth", "must be an object with a type: basic, bearer or hmac")], auth: undefined }
  }
  const type = own(value, "type")
  if (type !== "basic" && type !== "bearer" && type !== "hmac") {
    return { issues: [Issue.make("auth.type", "must be one of basic, bearer, hmac")], auth: undefined }
  }
  const issues: Array<Issue.Issue> = []
  const allowed: ReadonlyArray<string> = authFields[type]
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) issues.push(Issue.make(`auth.${key}`, `is not a field of ${type} authentication`))
  }
  switch (type) {
    case "basic": {
      const username = own(value, "username")
      let name: string | undefined
      if (username === undefined) issues.push(Issue.make("auth.username", "is required"))
      else if (typeof username !== "string") issues.push(Issue.make("auth.username", "must be a string"))
      else if (username.length === 0 || lengthOf(username) > limits.username) {
        issues.push(Issue.make("auth.username", `must be 1 to ${limits.username} characters`))
      } else if (username.includes(":")) {
        issues.push(Issue.make("auth.username", "must not contain a colon (RFC 7617)"))
      } else if (hasControl(username)) {
        issues.push(Issue.make("auth.username", "must not contain control characters"))
      } else name = username
      const password = checkSecret(issues, "auth.password", own(value, "password"), secretLength.password, noControl)
      return {
        issues,
        auth:
          issues.length === 0 && name !== undefined && password !== undefined
            ? { type, username: name, password: Redacted.make(password) }
            : undefined
      }
    }
    case "bearer": {
      const token = checkSecret(issues, "auth.token", own(value, "token"), secretLength.token, (text) =>
        hasControl(text) || text.trim() !== text
          ? "must not contain control characters or surrounding white space"
          : undefined
      )
      return {
        issues,
        auth: issues.length === 0 && token !== undefined ? { type, token: Redacted.make(token) } : undefined
      }
    }
    case "hmac": {
      const scheme = own(value, "scheme") ?? "waybill"
      if (scheme !== "waybill" && scheme !== "standard-webhooks") {
        issues.push(Issue.make("auth.scheme", "must be waybill or standard-webhooks"))
      }
      const secret = checkSecret(
        issues,
        "auth.secret",
        own(value, "secret"),
        secretLength.hmac,
        scheme === "standard-webhooks"
          ? (text) =>
              StandardWebhooks.isSecret(text)
                ? undefined
                : `must be ${StandardWebhooks.secretPrefix} followed by base64 of ${StandardWebhooks.keyBytes.min} to ${StandardWebhooks.keyBytes.max} bytes for the standard-webhooks scheme`
          : undefined
      )
      return {
        issues,
        auth:
          issues.length === 0 && secret !== undefined && (scheme === "waybill" || scheme === "standard-webhooks")
            ? { type, secret: Redacted.make(secret), scheme }
            : undefined
      }
    }
  }
}

const validateDescription = (value: unknown): { issues: Array<Issue.Issue>; description: string | null } => {
  if (value === undefined || value === null) return { issues: [], description: null }
  if (typeof value !== "string") return { issues: [Issue.make("description", "must be a string")], description: null }
  if (lengthOf(value) > limits.description) {
    return {
      issues: [Issue.make("description", `must be at most ${limits.description} characters`)],
      description: null
    }
  }
  return { issues: [], description: value }
}

const validateRateLimit = (value: unknown): Array<Issue.Issue> =>
  value === undefined ||
  value === null ||
  (typeof value === "number" && Number.isInteger(value) && value >= rateLimitBounds.min && value <= rateLimitBounds.max)
    ? []
    : [
        Issue.make(
          "rateLimitPerSecond",
          `must be an integer from ${rateLimitBounds.min} to ${rateLimitBounds.max}, or null for no limit`
        )
      ]

const validateOrdering = (value: unknown): Array<Issue.Issue> =>
  value === undefined || value === "none" || value === "fifo" || value === "key"
    ? []
    : [Issue.make("ordering", "must be one of none, fifo, key")]

/**
 * For an edit of an HMAC webhook naming no `scheme`: the request with the stored one, so signing stays.
 * @since 0.1.0
 */
export const withKeptScheme = (input: unknown, stored: SealedAuth): unknown => {
  if (stored.type !== "hmac" || !isRecord(input)) return input
  const auth = own(input, "auth")
  if (!isRecord(auth) || own(auth, "type") !== "hmac" || own(auth, "scheme") !== undefined) return input
  return { ...input, auth: { ...auth, scheme: stored.scheme } }
}

/** For an edit: the secret field left as stored (same auth type, secret omitted or sent as the mask). @since 0.1.0 */
export const keptSecretField = (
  input: unknown,
  storedType: "basic" | "bearer" | "hmac"
): Option.Option<"password" | "token" | "secret"> => {
  const auth = isRecord(input) ? own(input, "auth") : undefined
  if (!isRecord(auth) || own(auth, "type") !== storedType) return Option.none()
  const field = secretFieldOf(storedType)
  const secret = own(auth, field)
  return secret === undefined || secret === MASK ? Option.some(field) : Option.none()
}

/**
 * For an edit: refuses the mask as the secret of a changed auth type (it would be stored as the secret).
 * @since 0.1.0
 */
export const maskedSecretIssues = (input: unknown, storedType: "basic" | "bearer" | "hmac"): Array<Issue.Issue> => {
  const auth = isRecord(input) ? own(input, "auth") : undefined
  const type = isRecord(auth) ? own(auth, "type") : undefined
  if (type === storedType || (type !== "basic" && type !== "bearer" && type !== "hmac")) return []
  const field = secretFieldOf(type)
  return own(auth as Record<string, unknown>, field) === MASK
    ? [Issue.make(`auth.${field}`, `is the mask "${MASK}": a changed authentication type needs its secret`)]
    : []
}

/** Validates a registration request: every issue with its dotted path (never quoting a secret), or it. @since 0.1.0 */
export const validateRegistration = (
  input: unknown,
  context: RegistrationContext
): Either.Either<Registration, ReadonlyArray<Issue.Issue>> =>
  Either.flatMap(openObject(input, knownFields), ({ issues, record }) => {
    issues.push(...validateUrl(own(record, "url"), context))
    const events = validateEvents(own(record, "events"))
    issues.push(...events.issues)
    const filters = validateFilters(
      own(record, "filters"),
      events.events === undefined ? undefined : new Set(events.events),
      context.propertyDefinitions
    )
    issues.push(...filters.issues)
    const auth = validateAuth(own(record, "auth"))
    issues.push(...auth.issues)
    const description = validateDescription(own(record, "description"))
    issues.push(...description.issues)
    issues.push(...validateRateLimit(own(record, "rateLimitPerSecond")))
    issues.push(...validateOrdering(own(record, "ordering")))
    // Reserved keys, non-finite numbers and unstorable text, unless a field's own check said so.
    const reported = new Set(issues.map((issue) => issue.path))
    issues.push(...JsonInput.inspect(record).issues.filter((issue) => !reported.has(issue.path)))
    if (issues.length > 0 || events.events === undefined || auth.auth === undefined) {
      return Either.left(issues)
    }
    return Either.right({
      url: own(record, "url") as string,
      events: events.events,
      filters: filters.filters,
      auth: auth.auth,
      description: description.description,
      rateLimitPerSecond: own(record, "rateLimitPerSecond") as number | null | undefined,
      ordering: own(record, "ordering") as Ordering | undefined
    })
  })
