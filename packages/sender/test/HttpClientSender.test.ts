import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { HostResolver } from "@waybill/webhooks/HostResolver"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpClientSender from "../src/HttpClientSender.js"
import { layerResolver } from "../src/WebhookSender.js"
import { type MakeSender, type Resolve, senderContract } from "./contract.js"
import { request, serve } from "./receivers.js"

// A `HostResolver` answering what `resolve` says.
const resolverOf = (resolve: Resolve) =>
  Layer.succeed(
    HostResolver,
    HostResolver.of({
      resolve: (host) => {
        const answer = resolve(host)
        return answer === "silent" ? Effect.never : Effect.succeed(answer)
      }
    })
  )

const over =
  (client: Layer.Layer<HttpClient.HttpClient>, options: Partial<HttpClientSender.Options> = {}): MakeSender =>
  ({ allowPrivateTargets, resolve }) =>
    // The client lives as long as the test's scope (undici's dispatcher closes with it).
    Effect.flatMap(
      Layer.build(Layer.merge(client, resolve === undefined ? layerResolver : resolverOf(resolve))),
      (context) => HttpClientSender.make({ allowPrivateTargets, ...options }).pipe(Effect.provide(context))
    )

senderContract("HttpClientSender over FetchHttpClient", over(FetchHttpClient.layer))
senderContract("HttpClientSender over NodeHttpClient (undici)", over(NodeHttpClient.layerUndici))
senderContract("HttpClientSender over NodeHttpClient (node:http)", over(NodeHttpClient.layer))

describe("HttpClientSender", () => {
  it.scopedLive("keeps the fetch options it is given, and sends with redirect: manual", () =>
    Effect.gen(function* () {
      const receiver = yield* serve((request, response) =>
        request.url === "/hook"
          ? response.writeHead(307, { Location: "/elsewhere" }).end()
          : response.writeHead(200).end()
      )
      const send = yield* over(FetchHttpClient.layer, {
        fetchInit: { redirect: "follow", headers: { "X-From-Init": "kept" } }
      })({ allowPrivateTargets: true })
      assert.deepStrictEqual(yield* send.send(request(`http://127.0.0.1:${receiver.port}/hook`)), { statusCode: 307 })
      assert.deepStrictEqual(
        receiver.received.map((got) => [got.url, got.headers["x-from-init"]]),
        [["/hook", "kept"]]
      )
    })
  )
})
