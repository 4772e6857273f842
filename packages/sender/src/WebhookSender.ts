/**
 * The Node adapters of the webhook ports that touch the network: the `HttpSender` that makes
 * one delivery attempt over `undici`, and the `HostResolver` used at registration (the system
 * resolver, as the sender uses it).
 *
 * One attempt: one deadline covering DNS, connect, TLS, request and response headers (a slow
 * body after the headers does not turn an answer into a timeout); no redirect followed (a 3xx
 * is returned as it is, and the dispatcher counts it a failure); at most 4 KiB of the response
 * body read, then the connection is dropped. Requests go through one undici `Agent` per sender
 * (HTTP/1.1, one request at a time per connection, connections kept alive per origin). Unless
 * private targets are allowed, the address is checked against the SSRF rules (`@waybill/webhooks`
 * `Ssrf`) before connecting: IP literals directly, names through a `lookup` that vets every
 * address the resolver returns, so a name that re-resolves to a private address (DNS rebinding)
 * is refused at connect time. A request whose kept-alive connection the receiver closed before
 * answering goes once more, on the connection the pool gives it then.
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
import { Agent, buildConnector, type Dispatcher } from "undici"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Allows non-global targets (`WAYBILL_ALLOW_PRIVATE_TARGETS`); the SSRF check is skipped. */
  readonly allowPrivateTargets: boolean
  /** Response body bytes read at most before the connection is dropped. Default 4096. */
  readonly maxResponseBytes?: number | undefined
  /** Open connections per target origin (scheme, host and port). Default 64. */
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

// undici's deadlines: its connect timeout (see `make`); those for headers and body are off.
const timeoutCodes = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"])

// A request undici would not send (a header that may not be sent: nothing was sent), or an
// answer it could not read as HTTP.
const requestCodes = new Set(["UND_ERR_INVALID_ARG", "UND_ERR_NOT_SUPPORTED", "UND_ERR_REQ_CONTENT_LENGTH_MISMATCH"])
const responseCodes = new Set([
  "UND_ERR_RES_CONTENT_LENGTH_MISMATCH",
  "UND_ERR_HEADERS_OVERFLOW",
  "UND_ERR_RES_EXCEEDED_MAX_SIZE"
])

// Marks the error our lookup raises for a refused address.
const SSRF_CODE = "ERR_WAYBILL_SSRF_REFUSED"

interface CodedError extends Error {
  code?: string
  syscall?: string
  errors?: ReadonlyArray<CodedError>
  cause?: unknown
}

const codeOf = (error: CodedError): string | undefined => error.code ?? error.errors?.[0]?.code

// The class a single error's own code says, if it says one.
const classOf = (error: CodedError): ErrorClass | undefined => {
  const code = codeOf(error)
  if (code === SSRF_CODE) return "ssrf"
  if (error.syscall === "getaddrinfo" || error.syscall === "queryA") return "dns"
  if (code === undefined) return error.name === "HTTPParserError" ? "http" : undefined
  if (dnsCodes.has(code)) return "dns"
  if (tlsCodes.has(code) || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || code.startsWith("CERT_")) {
    return "tls"
  }
  if (code.startsWith("HPE_") || requestCodes.has(code) || responseCodes.has(code)) return "http"
  if (timeoutCodes.has(code)) return "timeout"
  // undici's socket error: a close (connect, unless its cause says more) or an answer that
  // came when none was due (a `100 Continue` nobody asked for, an upgrade).
  if (code === "UND_ERR_SOCKET") return /^bad (response|upgrade)$/.test(error.message) ? "http" : undefined
  return undefined
}

/**
 * The error class of a request error: Node's codes (`getaddrinfo`, TLS, sockets), undici's
 * (`UND_ERR_*`, `HPE_*` from its parser) and our SSRF refusal, looked for through `cause`.
 *
 * @since 0.1.0
 * @category classifying
 */
export const classify = (error: CodedError): ErrorClass => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    const found = classOf(current as CodedError)
    if (found !== undefined) return found
    current = (current as CodedError).cause
  }
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

const failure = (reason: ErrorClass, message: string) => new SendError({ reason, message: message.slice(0, 300) })

const fail = (reason: ErrorClass, message: string) => Effect.fail(failure(reason, message))

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

// What a failed request says, without its headers' values or its body.
const describe = (error: CodedError, headers: Readonly<Record<string, string>>): string => {
  const code = codeOf(error)
  if (code !== undefined && requestCodes.has(code)) {
    // undici does not say which name it refused; the name is no secret, its value may be.
    const name =
      error.message === "invalid header key" ? Object.keys(headers).find((key) => !TOKEN.test(key)) : undefined
    return `The request could not be built: ${name === undefined ? error.message : `invalid header name ${JSON.stringify(name.slice(0, 40))}`}`
  }
  return error.message
}

// Abort reasons (never seen by the caller: the attempt is settled before them).
const givenUp = new Error("The attempt was given up")
const enough = new Error("Enough of the response body was read")

// A connection the receiver closed before any answer: nobody answered, so the request may go
// once more.
const closedUnanswered = (error: CodedError) =>
  error.code === "UND_ERR_SOCKET" ? !/^bad /.test(error.message) : error.code === "ECONNRESET" || error.code === "EPIPE"

/**
 * Builds the sender; its connections close with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options) =>
  Effect.gen(function* () {
    const maxBytes = options.maxResponseBytes ?? 4096
    // Node's `ca` replaces the bundled roots: keep them and add the extra authorities. Built once,
    // not per connection.
    const secureContext = tls.createSecureContext(
      options.ca === undefined ? {} : { ca: [...tls.rootCertificates, ...[options.ca].flat()] }
    )
    const lookup = options.allowPrivateTargets ? options.lookup : guardedLookup(options.lookup ?? dns.lookup)
    // A connection still opening after the longest deadline any attempt had is given up (undici's
    // connect timeout, raised with it; its waiting requests fail with `timeout`): no attempt waits
    // longer, and a receiver that never accepts does not hold connections open.
    let longestDeadline = 0
    let connector: buildConnector.connector | undefined
    let connectorTimeout = 0
    // Set while undici writes the request a new connection was opened for (it does so as the
    // connection opens): any other request goes on a connection used before.
    let connecting = false
    const connect: buildConnector.connector = (target, callback) => {
      if (connector === undefined || connectorTimeout !== longestDeadline) {
        connectorTimeout = longestDeadline
        connector = buildConnector({
          secureContext,
          timeout: connectorTimeout,
          ...(lookup === undefined ? {} : { lookup })
        })
      }
      connector(target, (...args) => {
        if (args[0] !== null) return callback(...args)
        connecting = true
        try {
          callback(...args)
        } finally {
          connecting = false
        }
      })
    }
    const agent = new Agent({
      connections: options.maxSocketsPerHost ?? 64,
      pipelining: 1,
      connect,
      // The deadline is ours (below); undici's are off.
      headersTimeout: 0,
      bodyTimeout: 0
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => agent.destroy()))

    // What a URL means for a request, worked out once per URL (a webhook's URL never changes).
    type Target =
      | { readonly _tag: "Refused"; readonly reason: ErrorClass; readonly message: string }
      | { readonly _tag: "Target"; readonly origin: string; readonly path: string }
    const targets = new Map<string, Target>()
    const targetOf = (text: string): Target => {
      let url: URL
      try {
        url = new URL(text)
      } catch {
        return { _tag: "Refused", reason: "connect", message: "The target URL does not parse" }
      }
      if (url.protocol !== "https:" && url.protocol !== "http:") {
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
      // undici sends SNI for names only, never for an IP literal.
      return { _tag: "Target", origin: url.origin, path: `${url.pathname}${url.search}` }
    }

    // One attempt, as undici's handler: settled once, by the answer, a failure, the deadline or
    // an interruption.
    class Attempt implements Dispatcher.DispatchHandler {
      controller: Dispatcher.DispatchController | undefined = undefined
      statusCode: number | undefined = undefined
      settled = false
      reused = false
      resent = false
      read = 0
      timer: ReturnType<typeof setTimeout> | undefined = undefined
      constructor(
        readonly request: SendRequest,
        readonly dispatch: Dispatcher.DispatchOptions,
        readonly resume: (effect: Effect.Effect<SendResponse, SendError>) => void
      ) {}

      onRequestStart(controller: Dispatcher.DispatchController) {
        // Given up while it waited for a connection.
        if (this.settled) return controller.abort(givenUp)
        this.controller = controller
        this.reused = !connecting
      }

      onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number) {
        // Informational answers (103 Early Hints) precede the real one.
        if (statusCode >= 200) this.statusCode = statusCode
      }

      onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
        this.read += chunk.length
        // At `maxBytes` the answer is in and the connection is dropped.
        if (this.read >= maxBytes && !this.settled) {
          this.answer()
          controller.abort(enough)
        }
      }

      onResponseEnd() {
        if (this.settled) return
        // Answered once undici has put the connection back in its pool (on its next
        // `setImmediate`, queued after this call returns), so that an attempt made right after
        // this one can reuse it rather than open another.
        this.settled = true
        clearTimeout(this.timer)
        queueMicrotask(() => setImmediate(() => this.resume(Effect.succeed({ statusCode: this.statusCode! }))))
      }

      onResponseError(_controller: Dispatcher.DispatchController | undefined, error: CodedError) {
        if (this.settled) return
        // A head that read whole is an answer, whatever becomes of its body.
        if (this.statusCode !== undefined) return this.answer()
        // A kept-alive connection the receiver closed while it sat idle (its keep-alive timeout
        // racing our request) fails before any answer: nobody answered, so the request goes once
        // more instead of failing the attempt. A fresh connection that fails so is a failure.
        if (this.reused && !this.resent && closedUnanswered(error)) {
          this.resent = true
          this.controller = undefined
          // After undici is done with the closed connection.
          return void queueMicrotask(() => {
            if (!this.settled) agent.dispatch(this.dispatch, this)
          })
        }
        this.settle(Effect.fail(failure(classify(error), describe(error, this.request.headers))))
      }

      answer() {
        this.settle(Effect.succeed({ statusCode: this.statusCode! }))
      }

      settle(effect: Effect.Effect<SendResponse, SendError>) {
        this.settled = true
        clearTimeout(this.timer)
        this.resume(effect)
      }

      // The deadline covers everything up to the response headers; a slow body after them does
      // not turn an answer into a timeout.
      expire() {
        if (this.settled) return
        if (this.statusCode !== undefined) this.answer()
        else this.settle(fail("timeout", `No response within ${this.request.timeoutMs} ms`))
        this.controller?.abort(givenUp)
      }

      interrupt() {
        this.settled = true
        clearTimeout(this.timer)
        this.controller?.abort(givenUp)
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
      const dispatch: Dispatcher.DispatchOptions = {
        origin: target.origin,
        path: target.path,
        method: "POST",
        headers: request.headers,
        body: request.body
      }
      return Effect.async<SendResponse, SendError>((resume) => {
        if (request.timeoutMs > longestDeadline) longestDeadline = request.timeoutMs
        const attempt = new Attempt(request, dispatch, resume)
        attempt.timer = setTimeout(() => attempt.expire(), request.timeoutMs)
        agent.dispatch(dispatch, attempt)
        return Effect.sync(() => attempt.interrupt())
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
