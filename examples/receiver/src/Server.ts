/**
 * A small webhook receiver on `node:http`: it authenticates every delivery (HMAC in the
 * `waybill` or the `standard-webhooks` scheme, Basic or Bearer, as configured) and drops repeats
 * by `X-Delivery-Id` with `@waybill/signing`, prints one line per event and answers 2xx.
 *
 * @since 0.1.0
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Envelope } from "@waybill/events"
import { Deduplicator, Receiver, VerificationError } from "@waybill/signing"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { ReceiverConfig } from "./Config.js"

/**
 * A delivery that passed authentication and was not a repeat.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReceivedEvent {
  readonly deliveryId: string
  /** `X-Delivery-Attempt`: 1, or 2 for the service's retry. */
  readonly attempt: number | null
  /** How the delivery was authenticated. */
  readonly verifiedBy: "hmac" | "standard-webhooks" | "basic" | "bearer"
  /** The parsed delivery body `{ id, type, createdAt, payload }`. */
  readonly body: unknown
  /** The event type from the body (or `X-Event-Type` when the body has none). */
  readonly type: string
  /** Whether the body decoded against the event catalogue of this version. */
  readonly known: boolean
  /** The raw body text exactly as received. */
  readonly text: string
}

/**
 * Hooks for embedding and tests.
 *
 * @since 0.1.0
 * @category models
 */
export interface StartOptions {
  /** Where the one-line log goes; `console.log` by default. */
  readonly log?: (line: string) => void
  /**
   * Called once per new delivery before the 2xx. When it throws (or rejects) the receiver
   * answers 500 and forgets the delivery id, so the service's retry is processed.
   */
  readonly onEvent?: (event: ReceivedEvent) => void | Promise<void>
}

/**
 * A started receiver.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunningReceiver {
  readonly host: string
  readonly port: number
  /** `http://host:port`, to register as the webhook URL (with `WAYBILL_ALLOW_PRIVATE_TARGETS`). */
  readonly url: string
  /** Stops listening and closes open connections. */
  readonly close: () => Promise<void>
}

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    ...headers
  })
  response.end(text)
}

const header = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" && value !== "" ? value : undefined
}

const MAX_DELIVERY_ID_LENGTH = 256

const handle = async (
  config: ReceiverConfig,
  deduplicator: Deduplicator.Deduplicator,
  options: StartOptions,
  request: IncomingMessage,
  response: ServerResponse
): Promise<void> => {
  const log = options.log ?? console.log
  if (request.method === "GET" && request.url === "/health") return json(response, 200, { status: "ok" })
  if (request.method !== "POST") return json(response, 405, { error: "method not allowed" }, { allow: "POST" })

  const verdict = await Effect.runPromise(
    Effect.either(
      Receiver.authenticateIncomingMessage(request, config.credentials, {
        toleranceSeconds: config.toleranceSeconds,
        maxBodyBytes: config.maxBodyBytes
      })
    )
  )
  if (Either.isLeft(verdict)) {
    const error = verdict.left
    const status = VerificationError.httpStatus(error)
    // The error's message never holds a secret or the expected signature.
    log(`rejected status=${status} reason=${error._tag} (${error.message})`)
    // On 413 the rest of the body is left unread: close the connection rather than drain it.
    return json(response, status, { error: error._tag }, status === 413 ? { connection: "close" } : {})
  }
  const received = verdict.right

  // Only authenticated requests reach the deduplicator, so strangers cannot fill its memory.
  const deliveryId = header(request, "x-delivery-id")
  if (deliveryId === undefined || deliveryId.length > MAX_DELIVERY_ID_LENGTH) {
    log(`rejected status=400 reason=MissingDeliveryId`)
    return json(response, 400, { error: "X-Delivery-Id is missing or too long" })
  }
  let body: unknown
  try {
    body = JSON.parse(received.text)
  } catch {
    log(`rejected status=400 reason=InvalidJson delivery=${deliveryId}`)
    return json(response, 400, { error: "the body is not JSON" })
  }
  const envelope = Envelope.decode(body)
  const bodyType =
    typeof body === "object" && body !== null && "type" in body && typeof body.type === "string" ? body.type : undefined
  const type = bodyType ?? header(request, "x-event-type") ?? "unknown"
  const method = received.verified.method

  if (deduplicator.seen(deliveryId)) {
    log(`event=${type} delivery=${deliveryId} verified=${method} duplicate=true`)
    return json(response, 200, { status: "duplicate" })
  }
  const attempt = Number(header(request, "x-delivery-attempt"))
  const event: ReceivedEvent = {
    deliveryId,
    attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : null,
    verifiedBy: method,
    body,
    type,
    known: Either.isRight(envelope),
    text: received.text
  }
  try {
    await options.onEvent?.(event)
  } catch (error) {
    deduplicator.forget(deliveryId)
    log(`failed event=${type} delivery=${deliveryId} (${error instanceof Error ? error.message : String(error)})`)
    return json(response, 500, { error: "processing failed" })
  }
  // A body that does not decode is still authentic (e.g. an event type newer than this
  // receiver): accept it, so the service does not retry and alert, and say so in the log.
  log(`event=${type} delivery=${deliveryId} verified=${method}${event.known ? "" : " schema=unknown"}`)
  return json(response, 200, { status: "received" })
}

/**
 * Starts the receiver and resolves once it listens. Port `0` picks a free port; the address
 * actually bound is in the result.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (config: ReceiverConfig, options: StartOptions = {}): Promise<RunningReceiver> => {
  const deduplicator = Deduplicator.make({ capacity: config.dedupCapacity })
  const server = createServer((request, response) => {
    handle(config, deduplicator, options, request, response).catch((error: unknown) => {
      ;(options.log ?? console.log)(`error ${error instanceof Error ? error.message : String(error)}`)
      if (!response.headersSent) json(response, 500, { error: "internal" })
      else response.destroy()
    })
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(config.port, config.host, () => {
      server.off("error", reject)
      const address = server.address() as AddressInfo
      const host = address.address
      resolve({
        host,
        port: address.port,
        url: `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()))
            server.closeAllConnections()
          })
      })
    })
  })
}
