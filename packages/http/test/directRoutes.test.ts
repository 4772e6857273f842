import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { DraftService } from "@waybill/drafts/DraftService"
import { Effect, Layer, Logger } from "effect"
import fc from "fast-check"
import * as Http from "../src/Http.js"
import { layerApiWith } from "../src/internal/apiLayer.js"
import * as DirectRoutes from "../src/internal/directRoutes.js"
import * as RequestChecks from "../src/internal/requestChecks.js"
import { keyA, keyB, master, ports } from "./fixtures.js"

// The same API twice over in-memory ports of its own: as served (the direct routes ahead of the
// router) and with every request taking the router, the reference the direct routes must match.
const routedHandler = <E>(dependencies: Layer.Layer<Http.Requirements, E>) =>
  HttpApiBuilder.toWebHandler(
    HttpServer.layerContext.pipe(Layer.provideMerge(layerApiWith({ directRoutes: false })), Layer.provide(dependencies))
  )
const direct = Http.toWebHandler(ports)
const routed = routedHandler(ports)
afterAll(async () => {
  await direct.dispose()
  await routed.dispose()
})

interface Call {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
}

const send = (handler: (request: Request) => Promise<Response>, call: Call) =>
  handler(
    new Request(`http://waybill.test${call.path}`, {
      method: call.method,
      headers: call.headers,
      ...(call.body === undefined ? {} : { body: call.body })
    })
  )

// Ids and times differ between two stores; everything else must be byte for byte the same.
const normalized = (text: string) =>
  text.replace(/\b(drf|evt|act)_[0-9a-z]{26}\b/g, "$1_ID").replace(/"(createdAt|updatedAt)":\d+/g, '"$1":0')

const answer = async (handler: (request: Request) => Promise<Response>, call: Call) => {
  const response = await send(handler, call)
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: normalized(await response.text())
  }
}

const now = Math.floor(Date.now() / 1000)
const validMaster = {
  ...master,
  recurringSchedule: { ...master.recurringSchedule, startsAt: now + 86_400, endsAt: now + 30 * 86_400 }
}
const validEvent = { type: "tour-created", payload: { tour: { id: "tour_1", status: "planned", substatus: null } } }

// Bodies near the valid ones (a field replaced by any JSON value, or removed) and far from them.
const nearby = (valid: Record<string, unknown>, keys: ReadonlyArray<string>) =>
  fc
    .dictionary(fc.constantFrom(...keys, "unknownField"), fc.option(fc.jsonValue({ maxDepth: 3 })), { maxKeys: 3 })
    .map((changes) => {
      const body: Record<string, unknown> = { ...valid }
      for (const [key, value] of Object.entries(changes)) {
        if (value === null) delete body[key]
        else body[key] = value
      }
      return body
    })

const draftBodies = fc.oneof(
  fc.constant(validMaster),
  fc.constant({ origin: "manual", status: "draft", transportShapeId: "shape_line" }),
  nearby(validMaster, Object.keys(validMaster)),
  nearby(validMaster.recurringSchedule, Object.keys(validMaster.recurringSchedule)).map((recurringSchedule) => ({
    ...validMaster,
    recurringSchedule
  })),
  fc.jsonValue({ maxDepth: 4 })
)
const eventBodies = fc.oneof(
  fc.constant(validEvent),
  nearby(validEvent, ["type", "payload", "orderingKey"]),
  fc.record({ type: fc.constantFrom("tour-created", "tour-updated", "no-such-event"), payload: fc.jsonValue() }),
  fc.jsonValue({ maxDepth: 4 })
)
const authorizations = fc.constantFrom<Record<string, string>>(
  { authorization: `Bearer ${keyA}` },
  { authorization: `Bearer ${keyB}` },
  { authorization: "Bearer not-a-key-of-anyone" },
  { authorization: `Basic ${keyA}` },
  {}
)
const calls: fc.Arbitrary<Call> = fc
  .tuple(
    fc.oneof(
      fc.tuple(fc.constantFrom("/drafts", "/drafts?dryRun=1"), draftBodies),
      fc.tuple(fc.constantFrom("/events", "/events?x=1"), eventBodies)
    ),
    authorizations,
    fc.constantFrom("application/json", "application/json; charset=utf-8")
  )
  .map(([[path, body], authorization, contentType]) => ({
    method: "POST",
    path,
    headers: { ...authorization, "content-type": contentType },
    body: JSON.stringify(body)
  }))

describe("direct routes", () => {
  it.effect("take POST /drafts and POST /events with a checked body, and leave every other request to the router", () =>
    Effect.gen(function* () {
      const checks = yield* RequestChecks.make(yield* DirectRoutes.make)
      const router = Effect.succeed(HttpServerResponse.text("router", { status: 299 }))
      const handler = HttpApp.toWebHandler(checks(router))
      const json = { "content-type": "application/json", authorization: `Bearer ${keyA}` }
      const taken = (path: string, init: RequestInit) =>
        Effect.promise(() => handler(new Request(`http://waybill.test${path}`, init))).pipe(
          Effect.map((response) => response.status !== 299)
        )
      for (const path of ["/drafts", "/events"]) {
        assert.isTrue(yield* taken(path, { method: "POST", headers: json, body: "{}" }), path)
        assert.isFalse(yield* taken(path, { method: "POST", headers: json }), `${path} without a body`)
        assert.isFalse(yield* taken(path, { method: "GET", headers: json }))
        for (const other of [`${path}/`, `${path}?x=1`, path.toUpperCase(), `/${path}`, `${path}/x/actions`]) {
          assert.isFalse(yield* taken(other, { method: "POST", headers: json, body: "{}" }), other)
        }
      }
      assert.isFalse(yield* taken("/webhooks", { method: "POST", headers: json, body: "{}" }))
    }).pipe(Effect.provide(ports))
  )

  it.scoped("take them over node:http too, behind the request checks", () =>
    Effect.gen(function* () {
      const checks = yield* RequestChecks.make(yield* DirectRoutes.make)
      const router = Effect.succeed(HttpServerResponse.text("router", { status: 299 }))
      yield* HttpServer.serveEffect(checks(router))
      const client = yield* HttpClient.HttpClient
      const status = (path: string) =>
        HttpClientRequest.post(path).pipe(
          HttpClientRequest.bearerToken(keyA),
          HttpClientRequest.bodyUnsafeJson(validEvent),
          client.execute,
          Effect.map((response) => response.status)
        )
      assert.strictEqual(yield* status("/events"), 202)
      assert.strictEqual(yield* status("/events/"), 299)
    }).pipe(Effect.provide(NodeHttpServer.layerTest), Effect.provide(ports))
  )

  it.live("answer every request as the router does: status, headers and body", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(calls, async (call) => {
          assert.deepStrictEqual(await answer(direct.handler, call), await answer(routed.handler, call), call.body)
        }),
        { numRuns: 300 }
      )
    )
  )

  it.live("leave the same drafts behind as the router", () =>
    Effect.promise(async () => {
      const list = { method: "GET", path: "/drafts?limit=100", headers: { authorization: `Bearer ${keyA}` } }
      const stored = await answer(direct.handler, list)
      assert.strictEqual(stored.status, 200)
      assert.isAbove(JSON.parse(stored.body).data.length, 0, "some creates were accepted")
      assert.deepStrictEqual(stored, await answer(routed.handler, list))
    })
  )

  it.live("answer a failure of the service as the router does", () =>
    Effect.promise(async () => {
      const broken = Layer.merge(
        ports,
        Layer.effect(
          DraftService,
          Effect.map(DraftService, (drafts) =>
            DraftService.of({ ...drafts, create: () => Effect.die(new Error("disk on fire, password hunter2")) })
          )
        ).pipe(Layer.provide(ports))
      )
      // The failure is expected: its log lines would only lengthen a passing run.
      const quietBroken = Layer.merge(broken, Logger.remove(Logger.defaultLogger))
      const brokenDirect = Http.toWebHandler(quietBroken)
      const brokenRouted = routedHandler(quietBroken)
      const call: Call = {
        method: "POST",
        path: "/drafts",
        headers: { authorization: `Bearer ${keyA}`, "content-type": "application/json" },
        body: JSON.stringify(validMaster)
      }
      const failed = await answer(brokenDirect.handler, call)
      assert.strictEqual(failed.status, 500)
      assert.notInclude(failed.body, "hunter2")
      assert.deepStrictEqual(failed, await answer(brokenRouted.handler, call))
      await brokenDirect.dispose()
      await brokenRouted.dispose()
    })
  )
})
