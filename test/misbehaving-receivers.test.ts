/**
 * Receivers that misbehave, each recorded with the contract's error class, while a healthy
 * webhook of the same workspace gets every delivery: one that never answers (timeout), one that
 * resets the connection (connect), one that trickles its body after a 200 (succeeded: the
 * deadline covers the response headers), one that answers after the deadline (timeout), and one
 * that redirects (http, never followed). The healthy receiver's latency (publish to receipt) is
 * printed, not asserted: tests do not time things.
 */
import { createServer as createHttpServer } from "node:http"
import { createServer, type Server, type Socket } from "node:net"
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { call, forEachServer, keys } from "./harness.js"
import { report } from "./json-logs.js"
import { eventually, receiver } from "./receivers.js"

const DEADLINE_MS = 1_500
const EVENTS = 10

/** A raw TCP receiver for the scope, doing `onRequest` with each connection once it sent a request. */
const rawReceiver = (onRequest: (socket: Socket) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly server: Server; readonly sockets: Set<Socket> }>((resume) => {
      const sockets = new Set<Socket>()
      const server = createServer((socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
        socket.on("error", () => {})
        socket.once("data", () => onRequest(socket))
      })
      server.listen(0, "127.0.0.1", () =>
        resume(
          Effect.succeed({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, server, sockets })
        )
      )
    }),
    ({ server, sockets }) =>
      Effect.sync(() => {
        for (const socket of sockets) socket.destroy()
        server.close()
      })
  ).pipe(Effect.map(({ url }) => url))

/** An HTTP receiver for the scope that answers every request with `answer`. */
const httpReceiver = (answer: (respond: (status: number, headers?: Record<string, string>) => void) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly close: () => void }>((resume) => {
      const server = createHttpServer((req, res) => {
        req.resume()
        req.on("end", () =>
          answer((status, headers) => {
            if (!res.destroyed) res.writeHead(status, headers).end("ok")
          })
        )
      })
      server.listen(0, "127.0.0.1", () =>
        resume(
          Effect.succeed({
            url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
            close: () => {
              server.closeAllConnections()
              server.close()
            }
          })
        )
      )
    }),
    ({ close }) => Effect.sync(close)
  ).pipe(Effect.map(({ url }) => url))

const tourCreated = (id: string) => ({
  type: "tour-created",
  payload: { tour: { id, status: "planned", substatus: null, properties: {} } }
})

interface Attempt {
  readonly statusCode: number | null
  readonly error: string | null
}
interface Delivery {
  readonly status: string
  readonly attempts: ReadonlyArray<Attempt>
}

const deliveries = (id: string) =>
  Effect.map(
    call(`/webhooks/${id}/deliveries?limit=100`, { key: keys.a }),
    (reply) => reply.body.data as Array<Delivery>
  )

forEachServer(
  "misbehaving receivers",
  (it) => {
    it.effect("each is recorded with its error class; the healthy webhook gets every delivery meanwhile", () =>
      Effect.gen(function* () {
        const healthy = yield* receiver()
        const silent = yield* rawReceiver(() => {})
        const resetting = yield* rawReceiver((socket) => socket.resetAndDestroy())
        // It answers one request per connection, so it says so (`connection: close`) and closes
        // it: a kept-alive connection would carry the next delivery to a receiver that no longer
        // listens, and that delivery would time out (seen in CI, one run in many).
        const trickling = yield* rawReceiver((socket) => {
          socket.write("HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\n")
          let sent = 0
          const timer = setInterval(() => {
            if (socket.destroyed) return clearInterval(timer)
            if (sent === 6) {
              clearInterval(timer)
              return socket.end()
            }
            socket.write("x")
            sent++
          }, 100)
        })
        const late = yield* httpReceiver((respond) => setTimeout(() => respond(200), DEADLINE_MS + 1_000))
        const redirecting = yield* httpReceiver((respond) => respond(302, { location: "https://example.org/" }))
        const register = (url: string) =>
          Effect.map(
            call("/webhooks", {
              key: keys.a,
              json: { url, events: ["tour-created"], auth: { type: "bearer", token: "misbehaving" } }
            }),
            (reply) => {
              assert.strictEqual(reply.status, 201, reply.text)
              return reply.body.id as string
            }
          )
        const ids = {
          silent: yield* register(silent),
          resetting: yield* register(resetting),
          trickling: yield* register(trickling),
          late: yield* register(late),
          redirecting: yield* register(redirecting),
          healthy: yield* register(healthy.url)
        }

        const publishedAt = new Map<string, number>()
        for (let i = 0; i < EVENTS; i++) {
          const reply = yield* call("/events", { key: keys.a, json: tourCreated(`tour_misbehaving_${i}`) })
          publishedAt.set(reply.body.id, Date.now())
        }
        const receivedAt = new Map<string, number>()
        yield* eventually(
          Effect.sync(() => {
            for (const id of publishedAt.keys()) {
              if (!receivedAt.has(id) && healthy.for(id).length > 0) receivedAt.set(id, Date.now())
            }
            return receivedAt.size === EVENTS
          }),
          "every delivery to the healthy receiver",
          30_000
        )
        const latencies = [...receivedAt].map(([id, at]) => at - publishedAt.get(id)!).sort((a, b) => a - b)
        report(
          `misbehaving receivers: healthy webhook p50 ${latencies[Math.floor(EVENTS / 2)]} ms, p99 ${latencies[EVENTS - 1]} ms`
        )

        // Every misbehaving webhook ends with its deliveries settled, each attempt classified.
        const settled = (id: string) =>
          Effect.map(
            deliveries(id),
            (log) => log.length === EVENTS && log.every((delivery) => delivery.status !== "pending")
          )
        yield* eventually(
          Effect.map(Effect.all(Object.values(ids).map(settled)), (all) => all.every(Boolean)),
          "every delivery settled",
          60_000
        )
        const classes = (log: ReadonlyArray<Delivery>) => [
          ...new Set(
            log.flatMap((delivery) => delivery.attempts.map((attempt) => `${attempt.statusCode}/${attempt.error}`))
          )
        ]
        const expectations: ReadonlyArray<readonly [keyof typeof ids, string, ReadonlyArray<string>]> = [
          ["silent", "failed", ["null/timeout"]],
          ["resetting", "failed", ["null/connect"]],
          ["trickling", "succeeded", ["200/null"]],
          ["late", "failed", ["null/timeout"]],
          ["redirecting", "failed", ["302/http"]],
          ["healthy", "succeeded", ["200/null"]]
        ]
        for (const [name, status, attempts] of expectations) {
          const log = yield* deliveries(ids[name])
          assert.deepStrictEqual([...new Set(log.map((delivery) => delivery.status))], [status], name)
          assert.deepStrictEqual(classes(log), attempts, name)
          assert.isTrue(
            log.every((delivery) => delivery.attempts.length === (status === "failed" ? 2 : 1)),
            `${name}: one attempt, and one retry after a failure`
          )
        }
      }).pipe(Effect.scoped)
    )
  },
  { deliveryTimeoutMs: DEADLINE_MS, retryDelayMs: 200 }
)
