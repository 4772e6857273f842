/**
 * Receivers on 127.0.0.1 for the senders' tests: one over `node:http` (or `node:https`) that
 * records what it got, and one written at the byte level for answers `node:http` never sends.
 */
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import * as net from "node:net"
import type { SendRequest } from "@waybill/webhooks/HttpSender"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

// A self-signed certificate for 127.0.0.1 (test only; generated with openssl, valid until 2126).
const key = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgL6LYtNr9z/PAwTeD
6DxF6u81ggsSYeHVifEVtv9S8yihRANCAAS2DaAkhQWnTltu+nPXPtUzdL8CJcvo
58lrV/egchG40/ltNmMfKdTtagLy8zJ+MYnhJN2A3z7BmnJcOqySOPvt
-----END PRIVATE KEY-----`
export const cert = `-----BEGIN CERTIFICATE-----
MIIBjzCCATagAwIBAgIUPoMV11CiZInMyQqFMGvo4rtXNwAwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyMjAxMjEyNFoYDzIxMjYxMDI5
MDEyMTI0WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAS2DaAkhQWnTltu+nPXPtUzdL8CJcvo58lrV/egchG40/ltNmMfKdTt
agLy8zJ+MYnhJN2A3z7BmnJcOqySOPvto2QwYjAdBgNVHQ4EFgQUpudeM4cqlF4q
Ny7BQSeu6qLh+Y0wHwYDVR0jBBgwFoAUpudeM4cqlF4qNy7BQSeu6qLh+Y0wDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0cAMEQC
IFV+zFAA5hMGdt0Au5NG2UUvoL4QAvMoUJiRuXUOuKv2AiADVId/kr0KzmOf/JVD
NncqA8PqG3oGZDaDrLj9aHQs8w==
-----END CERTIFICATE-----`

export interface Received {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
}

export interface Receiver {
  readonly port: number
  readonly received: Array<Received>
  readonly connections: () => number
  readonly closed: Array<string>
}

// A receiver on 127.0.0.1 and an ephemeral port, closed with the scope.
export const serve = (
  respond: (request: http.IncomingMessage, response: http.ServerResponse) => void,
  secure = false
) =>
  Effect.acquireRelease(
    Effect.async<Receiver & { readonly server: http.Server }>((resume) => {
      const received: Array<Received> = []
      const closed: Array<string> = []
      let connections = 0
      const handler = (request: http.IncomingMessage, response: http.ServerResponse) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          received.push({
            method: request.method ?? "",
            url: request.url ?? "",
            headers: request.headers,
            body: Buffer.concat(chunks)
          })
          respond(request, response)
        })
        response.on("close", () => closed.push(request.url ?? ""))
      }
      const server = secure ? https.createServer({ key, cert }, handler) : http.createServer(handler)
      server.on(secure ? "secureConnection" : "connection", () => connections++)
      server.listen(0, "127.0.0.1", () =>
        resume(
          Effect.succeed({
            server,
            port: (server.address() as AddressInfo).port,
            received,
            closed,
            connections: () => connections
          })
        )
      )
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

export const request = (url: string, overrides: Partial<SendRequest> = {}): SendRequest => ({
  url,
  headers: {
    "Content-Type": "application/json",
    "X-Delivery-Id": "dlv_1",
    "X-Event-Id": "evt_1",
    "X-Event-Type": "tour-created",
    "X-Delivery-Attempt": "1"
  },
  body: '{"id":"evt_1","type":"tour-created","createdAt":1798000000,"payload":{"tour":{"id":"tour_1","name":"Köln → Łódź"}}}',
  timeoutMs: 5_000,
  ...overrides
})

// A receiver written at the byte level, to play responses `node:http` would never send: each
// request (read whole, by its Content-Length) is answered by `respond` with raw pieces written
// one by one, a few milliseconds apart; `null` closes the connection there.
export const serveRaw = (respond: (index: number) => ReadonlyArray<string | null>) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: net.Server; readonly port: number; readonly connections: () => number }>(
      (resume) => {
        let connections = 0
        let index = 0
        const sockets = new Set<net.Socket>()
        const server = net.createServer((socket) => {
          connections++
          sockets.add(socket)
          socket.on("close", () => sockets.delete(socket))
          socket.on("error", () => {})
          let buffered = ""
          socket.on("data", async (chunk) => {
            buffered += chunk.toString("latin1")
            while (true) {
              const end = buffered.indexOf("\r\n\r\n")
              if (end < 0) return
              const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0)
              if (buffered.length < end + 4 + length) return
              buffered = buffered.slice(end + 4 + length)
              for (const piece of respond(index++)) {
                if (piece === null) return void socket.end()
                socket.write(Buffer.from(piece, "latin1"))
                await new Promise((resolve) => setTimeout(resolve, 5))
              }
            }
          })
        })
        server.on("close", () => {
          for (const socket of sockets) socket.destroy()
        })
        server.listen(0, "127.0.0.1", () =>
          resume(
            Effect.succeed({ server, port: (server.address() as AddressInfo).port, connections: () => connections })
          )
        )
      }
    ),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.emit("close")
      })
  )

export const reasonOf = <A>(result: Either.Either<A, { readonly reason: string }>) =>
  Either.isLeft(result) ? result.left.reason : "none"
