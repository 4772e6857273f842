/**
 * The Node `HttpSender` over undici: one deadline, no redirect, at most 4 KiB read, the SSRF rules checked
 * on the address it connects to; and the system `HostResolver`. How an attempt goes: docs/webhooks.md ("Senders").
 * @since 0.1.0
 */
import * as dns from "node:dns"
import type { LookupFunction } from "node:net"
import * as tls from "node:tls"
import type { ErrorClass } from "@waybill/webhooks/Delivery"
import { HostResolver } from "@waybill/webhooks/HostResolver"
import { HttpSender, SendError, type SendRequest, type SendResponse } from "@waybill/webhooks/HttpSender"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Agent, buildConnector, type Dispatcher } from "undici"
import * as Classify from "./internal/classify.js"
import { type CodedError, SSRF_CODE } from "./internal/classify.js"
import { makeTargets, refusalOfName } from "./internal/target.js"

/** @since 0.1.0 */
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

const refusedError = (message: string): CodedError => {
  const error: CodedError = new Error(message)
  error.code = SSRF_CODE
  return error
}

// Refuses the name if any address is; answers in the form asked (`net` races IPv4 and IPv6 with all).
const guardedLookup =
  (resolve: typeof dns.lookup): LookupFunction =>
  (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, "", 0)
      const refusal = refusalOfName(
        hostname,
        addresses.map((entry) => entry.address)
      )
      if (refusal !== undefined) return callback(refusedError(refusal), "", 0)
      if (addresses.length === 0) {
        const empty: CodedError = new Error(`getaddrinfo ENOTFOUND ${hostname}`)
        empty.code = "ENOTFOUND"
        return callback(empty, "", 0)
      }
      if (options.all === true) return callback(null, addresses)
      return callback(null, addresses[0]!.address, addresses[0]!.family)
    })
  }

/**
 * The error class of a request error, from Node's codes, undici's and the SSRF refusal, through `cause`.
 * @since 0.1.0
 */
export const classify: (error: Error) => ErrorClass = Classify.classify

const failure = (reason: ErrorClass, message: string) => new SendError({ reason, message: message.slice(0, 300) })

const fail = (reason: ErrorClass, message: string) => Effect.fail(failure(reason, message))

// Abort reasons (never seen by the caller: the attempt is settled before them).
const givenUp = new Error("The attempt was given up")
const enough = new Error("Enough of the response body was read")

// A connection the receiver closed before any answer: nobody answered, so the request may go again.
const closedUnanswered = (error: CodedError) =>
  error.code === "UND_ERR_SOCKET" ? !/^bad /.test(error.message) : error.code === "ECONNRESET" || error.code === "EPIPE"

/** Builds the sender; its connections close with the scope. @since 0.1.0 */
export const make = (options: Options) =>
  Effect.gen(function* () {
    const maxBytes = options.maxResponseBytes ?? 4096
    // Node's `ca` replaces the bundled roots: keep them and add the extra authorities.
    const secureContext = tls.createSecureContext(
      options.ca === undefined ? {} : { ca: [...tls.rootCertificates, ...[options.ca].flat()] }
    )
    const lookup = options.allowPrivateTargets ? options.lookup : guardedLookup(options.lookup ?? dns.lookup)
    // undici's connect timeout follows the longest deadline yet: a receiver that never accepts holds no
    // connection open past it.
    let longestDeadline = 0
    let connector: buildConnector.connector | undefined
    let connectorTimeout = 0
    // Set while undici writes the request a new connection was opened for: others go on reused ones.
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

    const targetOf = makeTargets(options.allowPrivateTargets)

    // Settled once: by the answer, a failure, the deadline or an interruption.
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
        if (this.read >= maxBytes && !this.settled) {
          this.answer()
          controller.abort(enough)
        }
      }

      onResponseEnd() {
        if (this.settled) return
        // Answered after undici puts the connection back in its pool (its next `setImmediate`), so
        // that an attempt made right after can reuse it.
        this.settled = true
        clearTimeout(this.timer)
        queueMicrotask(() => setImmediate(() => this.resume(Effect.succeed({ statusCode: this.statusCode! }))))
      }

      onResponseError(_controller: Dispatcher.DispatchController | undefined, error: CodedError) {
        if (this.settled) return
        // A head that read whole is an answer, whatever becomes of its body.
        if (this.statusCode !== undefined) return this.answer()
        // A kept-alive connection the receiver closed while idle fails before any answer: the request
        // goes once more. A fresh connection that fails so is a failure.
        if (this.reused && !this.resent && closedUnanswered(error)) {
          this.resent = true
          this.controller = undefined
          // After undici is done with the closed connection.
          return void queueMicrotask(() => {
            if (!this.settled) agent.dispatch(this.dispatch, this)
          })
        }
        this.settle(Effect.fail(failure(Classify.classify(error), Classify.describeError(error, this.request.headers))))
      }

      answer() {
        this.settle(Effect.succeed({ statusCode: this.statusCode! }))
      }

      settle(effect: Effect.Effect<SendResponse, SendError>) {
        this.settled = true
        clearTimeout(this.timer)
        this.resume(effect)
      }

      // A slow body after the response head does not turn an answer into a timeout.
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
      const target = targetOf(request.url)
      if (target._tag === "Refused") return fail(target.reason, target.message)
      // undici sends SNI for names only, never for an IP literal.
      const dispatch: Dispatcher.DispatchOptions = {
        origin: target.url.origin,
        path: `${target.url.pathname}${target.url.search}`,
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

/** The Node sender as a layer. @since 0.1.0 */
export const layer = (options: Options): Layer.Layer<HttpSender> => Layer.scoped(HttpSender, make(options))

/**
 * The system resolver (`getaddrinfo`, as the sender uses it): every address of a name, none on failure.
 * @since 0.1.0
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
