/**
 * An `HttpSender` on `undici` (its own llhttp parser and connection pools), for the dispatcher
 * benchmark's side-by-side with our HTTP/1 client (`packages/http/src/internal/http1.ts`,
 * issue 23). Same behaviour for the benchmark's purposes: one deadline up to the response
 * headers, at most 4 KiB of the body read, connections kept alive per origin. No SSRF checks
 * (the benchmark's receiver is on loopback, private targets allowed).
 */
import { HttpSender, SendError, type SendRequest, type SendResponse } from "@waybill/webhooks/HttpSender"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Agent } from "undici"

/** The undici sender, with `connections` per origin. */
export const layer = (connections: number): Layer.Layer<HttpSender> =>
  Layer.scoped(
    HttpSender,
    Effect.gen(function* () {
      const agent = new Agent({ connections, pipelining: 1, keepAliveTimeout: 60_000 })
      yield* Effect.addFinalizer(() => Effect.promise(() => agent.close()))
      const send = (request: SendRequest): Effect.Effect<SendResponse, SendError> =>
        Effect.async<SendResponse, SendError>((resume) => {
          const controller = new AbortController()
          const url = new URL(request.url)
          agent
            .request({
              origin: url.origin,
              path: `${url.pathname}${url.search}`,
              method: "POST",
              headers: request.headers,
              body: request.body,
              headersTimeout: request.timeoutMs,
              bodyTimeout: request.timeoutMs,
              signal: controller.signal
            })
            .then(
              async (response) => {
                let read = 0
                for await (const chunk of response.body) {
                  read += (chunk as Buffer).length
                  if (read >= 4096) {
                    response.body.destroy()
                    break
                  }
                }
                resume(Effect.succeed({ statusCode: response.statusCode }))
              },
              (error: Error) => resume(Effect.fail(new SendError({ reason: "connect", message: error.message })))
            )
          return Effect.sync(() => controller.abort())
        })
      return HttpSender.of({ send })
    })
  )
