/**
 * The Node adapters of the webhook ports that touch the network: the `HttpSender` that makes
 * one delivery attempt with `node:http`/`node:https`, and the `HostResolver` used at
 * registration (the system resolver, as the sender uses it).
 *
 * One attempt: one deadline covering DNS, connect, TLS, request and response headers; no
 * redirect followed (a 3xx is returned as it is, and the dispatcher counts it a failure); at
 * most 4 KiB of the response body read, then the connection is dropped. Requests go through a
 * small HTTP/1.1 client of our own (`internal/http1`), about three times cheaper in CPU than
 * `node:http` for this one use. Unless private targets
 * are allowed, the address is checked against the SSRF rules (`@waybill/webhooks` `Ssrf`)
 * before connecting: IP literals directly, names through a `lookup` that vets every address the
 * resolver returns, so a name that re-resolves to a private address (DNS rebinding) is refused
 * at connect time. Connections are kept alive and reused per target.
 *
 * @since 0.1.0
 */
import * as dns from "node:dns"
import type { LookupFunction } from "node:net"
import * as tls from "node:tls"
import type { ErrorClass } from "@waybill/webhooks/Delivery"
import { HostResolver } from "@waybill/webhooks/HostResolver"
import { HttpSender, SendError, type SendRequest, type SendResponse } from "@waybill/webhooks/HttpSender"
import * as Ssrf from "@waybill/webhooks/Ssrf"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Http1 from "./internal/http1.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Allows non-global targets (`WAYBILL_ALLOW_PRIVATE_TARGETS`); the SSRF check is skipped. */
  readonly allowPrivateTargets: boolean
  /** Response body bytes read at most before the connection is dropped. Default 4096. */
  readonly maxResponseBytes?: number | undefined
  /** Open connections per target host and port. Default 64. */
  readonly maxSocketsPerHost?: number | undefined
  /** Extra certificate authorities trusted for https targets (the system's are kept). */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer> | undefined
  /** Replaces the system resolver (tests, custom DNS). */
  readonly lookup?: typeof dns.lookup | undefined
}

const dnsCodes = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NODATA",
  "EAI_NONAME",
  "EAI_ADDRFAMILY",
  "ENODATA",
  "ESERVFAIL",
  "ENOTIMP",
  "EREFUSED",
  "EBADNAME",
  "EBADRESP",
  "ECONNREFUSED_DNS"
])

const tlsCodes = new Set([
  "EPROTO",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "HOSTNAME_MISMATCH",
  "INVALID_CA",
  "PATH_LENGTH_EXCEEDED"
])

// Marks the error our lookup raises for a refused address.
const SSRF_CODE = "ERR_WAYBILL_SSRF_REFUSED"

interface CodedError extends Error {
  code?: string
  syscall?: string
  errors?: ReadonlyArray<CodedError>
}

const codeOf = (error: CodedError): string | undefined => error.code ?? error.errors?.[0]?.code

/**
 * The error class of a Node request error.
 *
 * @since 0.1.0
 * @category classifying
 */
export const classify = (error: CodedError): ErrorClass => {
  const code = codeOf(error)
  if (code === SSRF_CODE) return "ssrf"
  if (code === undefined) return "connect"
  if (dnsCodes.has(code) || error.syscall === "getaddrinfo" || error.syscall === "queryA") return "dns"
  if (tlsCodes.has(code) || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || code.startsWith("CERT_")) {
    return "tls"
  }
  if (code.startsWith("HPE_")) return "http"
  return "connect"
}

const refusedError = (host: string, address: string, category: Ssrf.AddressCategory): CodedError => {
  const error: CodedError = new Error(
    `${host} resolves to ${Ssrf.describe(category)} (${address}); private targets are not allowed`
  )
  error.code = SSRF_CODE
  return error
}

// Resolves every address, refuses the name if any of them is refused, then answers in the form
// the caller asked for (`net` asks for all addresses when it races IPv4 and IPv6).
const guardedLookup =
  (resolve: typeof dns.lookup): LookupFunction =>
  (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, "", 0)
      for (const entry of addresses) {
        const category = Ssrf.refusal(entry.address)
        if (Option.isSome(category)) return callback(refusedError(hostname, entry.address, category.value), "", 0)
      }
      if (addresses.length === 0) {
        const empty: CodedError = new Error(`getaddrinfo ENOTFOUND ${hostname}`)
        empty.code = "ENOTFOUND"
        return callback(empty, "", 0)
      }
      if (options.all === true) return callback(null, addresses)
      return callback(null, addresses[0]!.address, addresses[0]!.family)
    })
  }

const fail = (reason: ErrorClass, message: string) =>
  Effect.fail(new SendError({ reason, message: message.slice(0, 300) }))

/**
 * Builds the sender; its connection pools close with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options) =>
  Effect.gen(function* () {
    const maxBytes = options.maxResponseBytes ?? 4096
    const client = Http1.makeClient({ maxSocketsPerOrigin: options.maxSocketsPerHost ?? 64 })
    yield* Effect.addFinalizer(() => Effect.sync(() => client.close()))
    // Node's `ca` replaces the bundled roots: keep them and add the extra authorities.
    const secureContext = tls.createSecureContext(
      options.ca === undefined ? {} : { ca: [...tls.rootCertificates, ...[options.ca].flat()] }
    )
    const lookup = options.allowPrivateTargets ? options.lookup : guardedLookup(options.lookup ?? dns.lookup)

    // What a URL means for a request, worked out once per URL (a webhook's URL never changes).
    type Target =
      | { readonly _tag: "Refused"; readonly reason: ErrorClass; readonly message: string }
      | {
          readonly _tag: "Target"
          readonly origin: Http1.Origin
          readonly path: string
          readonly hostHeader: string
        }
    const targets = new Map<string, Target>()
    const targetOf = (text: string): Target => {
      let url: URL
      try {
        url = new URL(text)
      } catch {
        return { _tag: "Refused", reason: "connect", message: "The target URL does not parse" }
      }
      const secure = url.protocol === "https:"
      if (!secure && url.protocol !== "http:") {
        return { _tag: "Refused", reason: "connect", message: `Unsupported protocol ${url.protocol}` }
      }
      const host = Ssrf.hostOf(url)
      if (!options.allowPrivateTargets) {
        // Sockets connect to IP literals without a lookup: check them here.
        const literal = Ssrf.parseAddress(host)
        if (Option.isSome(literal)) {
          const category = Ssrf.classify(literal.value)
          if (Option.isSome(category)) {
            return {
              _tag: "Refused",
              reason: "ssrf",
              message: `${host} is ${Ssrf.describe(category.value)}; private targets are not allowed`
            }
          }
        }
      }
      const port = url.port === "" ? (secure ? 443 : 80) : Number(url.port)
      return {
        _tag: "Target",
        origin: {
          key: `${secure ? "https" : "http"}|${host}|${port}`,
          secure,
          host,
          port,
          // SNI needs a name, never an IP literal.
          servername: secure && !Ssrf.isIpLiteral(host) ? host : undefined,
          lookup,
          secureContext: secure ? secureContext : undefined
        },
        path: `${url.pathname}${url.search}`,
        hostHeader: url.host
      }
    }

    const send = (request: SendRequest): Effect.Effect<SendResponse, SendError> => {
      let target = targets.get(request.url)
      if (target === undefined) {
        target = targetOf(request.url)
        if (targets.size >= 10_000) targets.clear()
        targets.set(request.url, target)
      }
      if (target._tag === "Refused") return fail(target.reason, target.message)
      let head: string
      try {
        head = Http1.requestHead(
          target.path,
          target.hostHeader,
          request.headers,
          Buffer.byteLength(request.body, "utf8")
        )
      } catch (error) {
        return fail("http", `The request could not be built: ${(error as Error).message}`)
      }
      const origin = target.origin
      return Effect.async<SendResponse, SendError>((resume) => {
        let settled = false
        const pending = client.request(origin, head, request.body, maxBytes, (result) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          // An answer whose body broke off is still an answer.
          if (result._tag === "Response") resume(Effect.succeed({ statusCode: result.statusCode }))
          else if (result.statusCode !== undefined) resume(Effect.succeed({ statusCode: result.statusCode }))
          else resume(fail(classify(result.error), result.error.message))
        })
        const timer = setTimeout(() => {
          // The deadline covers everything up to the response headers; a slow body after them
          // does not turn an answer into a timeout.
          settled = true
          const statusCode = pending.statusCode()
          pending.abort()
          resume(
            statusCode !== undefined
              ? Effect.succeed({ statusCode })
              : fail("timeout", `No response within ${request.timeoutMs} ms`)
          )
        }, request.timeoutMs)
        return Effect.sync(() => {
          settled = true
          clearTimeout(timer)
          pending.abort()
        })
      })
    }

    return HttpSender.of({ send })
  })

/**
 * The Node sender as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<HttpSender> => Layer.scoped(HttpSender, make(options))

/**
 * The system resolver (`getaddrinfo`, as the sender uses it): every address of a name; none
 * when it does not resolve.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerResolver: Layer.Layer<HostResolver> = Layer.succeed(
  HostResolver,
  HostResolver.of({
    resolve: (host) =>
      Effect.tryPromise(() => dns.promises.lookup(host, { all: true, verbatim: true })).pipe(
        Effect.map((addresses): ReadonlyArray<string> => addresses.map((entry) => entry.address)),
        Effect.orElseSucceed((): ReadonlyArray<string> => [])
      )
  })
)
