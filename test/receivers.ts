/**
 * Scriptable webhook receivers on 127.0.0.1 for end-to-end tests: each records every request
 * (path, headers, raw body) and answers as its script says.
 *
 * A receiver's URL has a path of its own (`/r<random>`): a test's webhooks outlive its receiver,
 * and when a later receiver is given the same port, their deliveries reach it. Requests outside
 * its path are answered 200 and not recorded; recorded paths are relative to it.
 */
import { randomBytes } from "node:crypto"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"

export interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** When the request arrived (epoch ms). */
  readonly arrivedAt: number
  /** When its answer was written, if it was (epoch ms). */
  answeredAt: number | undefined
  /** The sender's port of the connection it came on (to find the sending process). */
  readonly remotePort: number | undefined
}

export interface Answer {
  readonly status: number
  readonly delayMs?: number
  readonly headers?: Record<string, string>
}

export interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  /** Requests whose X-Delivery-Id or X-Event-Id is `id`. */
  readonly for: (id: string) => Array<Received>
}

/** A receiver for the scope; `script` answers each request (the default: 200 at once). */
export const receiver = (script: (request: Received, index: number) => Answer = () => ({ status: 200 })) =>
  Effect.acquireRelease(
    Effect.async<{ readonly receiver: Receiver; readonly close: () => void }>((resume) => {
      const received: Array<Received> = []
      const own = `/r${randomBytes(6).toString("hex")}`
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          const url = req.url ?? "/"
          if (url !== own && !url.startsWith(`${own}/`) && !url.startsWith(`${own}?`)) {
            res.writeHead(200).end("not this receiver's")
            return
          }
          const path = url.slice(own.length)
          const request: Received = {
            path: path.startsWith("/") ? path : `/${path}`,
            headers: req.headers,
            body: Buffer.concat(chunks).toString("utf8"),
            arrivedAt: Date.now(),
            answeredAt: undefined,
            remotePort: req.socket.remotePort
          }
          const answer = script(request, received.length)
          received.push(request)
          const reply = () => {
            if (res.destroyed) return
            res.writeHead(answer.status, answer.headers ?? {})
            res.end("ok")
            request.answeredAt = Date.now()
          }
          if (answer.delayMs === undefined) reply()
          else setTimeout(reply, answer.delayMs).unref()
        })
      })
      server.keepAliveTimeout = 1_000
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(
          Effect.succeed({
            receiver: {
              url: `http://127.0.0.1:${port}${own}`,
              received,
              for: (id) =>
                received.filter(
                  (request) => request.headers["x-delivery-id"] === id || request.headers["x-event-id"] === id
                )
            },
            close: () => {
              server.closeAllConnections()
              server.close()
            }
          })
        )
      })
    }),
    ({ close }) => Effect.sync(close)
  ).pipe(Effect.map(({ receiver }) => receiver))

/** Polls `check` every 50 ms until it holds, failing after `timeoutMs`. */
export const eventually = <E, R>(check: Effect.Effect<boolean, E, R>, what: string, timeoutMs = 15_000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      if (yield* check) return
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.die(new Error(`timed out waiting for: ${what}`))
  })
