import { assert, describe, it } from "@effect/vitest"
import * as ValidationError from "@waybill/core/ValidationError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as HostResolver from "../src/HostResolver.js"
import { MASK } from "../src/Webhook.js"
import { WebhookRepository } from "../src/WebhookRepository.js"
import { WebhookNotFound, WebhookService } from "../src/WebhookService.js"
import {
  basicAuth,
  bearerAuth,
  hmacAuth,
  inWorkspace,
  leakedSecrets,
  makeLayer,
  NOW,
  ok,
  register,
  registration,
  renderings,
  wsA,
  wsB
} from "./fixtures.js"

const TestLayer = makeLayer({ respond: () => ok() })

const service = WebhookService

const notFound = (error: unknown, id: string) => {
  assert.instanceOf(error, WebhookNotFound)
  assert.deepStrictEqual({ ...(error as WebhookNotFound) }, { ...WebhookNotFound.of(id) })
}

// The ValidationError a registration fails with (any other failure fails the test).
const invalid = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.flip(effect), (error) =>
    error instanceof ValidationError.ValidationError
      ? Effect.succeed(error)
      : Effect.die(`expected a ValidationError, got ${error._tag}`)
  )

describe("WebhookService", () => {
  it.effect("registers a webhook and answers it with every secret masked", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const created = yield* register(
        registration({
          events: ["tour-created", "tour-action-created"],
          filters: {
            "tour-action-created": {
              conditions: [{ field: "action.payload.type", operator: "equals", value: "advance" }]
            }
          },
          description: "ops board"
        })
      )
      assert.match(created.id, /^whk_[0-9a-z]{26}$/)
      assert.deepStrictEqual(created, {
        id: created.id,
        url: "https://hooks.example.org/waybill",
        events: ["tour-created", "tour-action-created"],
        filters: {
          "tour-action-created": {
            match: "all",
            conditions: [{ field: "action.payload.type", operator: "equals", value: "advance" }]
          }
        },
        auth: { type: "hmac", secret: MASK, scheme: "waybill" },
        description: "ops board",
        createdAt: NOW / 1000,
        status: "enabled",
        rateLimitPerSecond: null,
        ordering: "none"
      })
      const basic = yield* register(registration({ auth: basicAuth }))
      assert.deepStrictEqual(basic.auth, { type: "basic", username: "ops", password: "********" })
      const bearer = yield* register(registration({ auth: bearerAuth }))
      assert.deepStrictEqual(bearer.auth, { type: "bearer", token: "********" })
      assert.deepStrictEqual(basic.filters, {})
      assert.strictEqual(basic.description, null)
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("stores secrets sealed, never in clear", () =>
    Effect.gen(function* () {
      const created = yield* register(registration({ auth: basicAuth }))
      const stored = yield* Effect.flatMap(WebhookRepository, (repository) => repository.get(wsA, created.id))
      assert.deepStrictEqual(leakedSecrets(renderings(stored)), [])
      assert.isTrue(stored._tag === "Some" && stored.value.auth.type === "basic")
      if (stored._tag === "Some" && stored.value.auth.type === "basic") {
        assert.match(stored.value.auth.password, /^v1\./)
      }
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("reports every problem in one ValidationError", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        register({ url: "http://x.example.org", events: [], auth: { type: "hmac", secret: "short" } })
      )
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
        const error = exit.cause.error
        assert.instanceOf(error, ValidationError.ValidationError)
        assert.deepStrictEqual(
          error.issues.map((issue) => issue.path),
          ["url", "events", "auth.secret"]
        )
        assert.strictEqual(error.message, "The webhook is invalid: 3 problems found")
      }
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("resolves host names at registration: a private answer is refused, no answer accepted", () =>
    Effect.gen(function* () {
      const refused = yield* invalid(register(registration({ url: "https://internal.example.org/hook" })))
      assert.deepStrictEqual(
        refused.issues.map((issue) => issue.path),
        ["url"]
      )
      assert.match(refused.issues[0]!.message, /^resolves to a private address \(10\.1\.2\.3\)/)
      const mixed = yield* invalid(register(registration({ url: "https://mixed.example.org/hook" })))
      assert.match(mixed.issues[0]!.message, /^resolves to the link-local cloud metadata address/)
      yield* register(registration({ url: "https://unknown.example.org/hook" }))
      yield* register(registration({ url: "https://public.example.org/hook" }))
    }).pipe(
      Effect.provide(
        makeLayer({
          respond: () => ok(),
          resolver: {
            "internal.example.org": ["10.1.2.3"],
            "mixed.example.org": ["93.184.215.14", "169.254.169.254"],
            "public.example.org": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]
          }
        })
      )
    )
  )

  it.effect("a resolver that never answers does not block registration", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(register(registration()))
      yield* TestClock.adjust("5 seconds")
      const created = yield* fiber
      assert.strictEqual(created.url, "https://hooks.example.org/waybill")
    }).pipe(
      Effect.provide(
        makeLayer({ respond: () => ok() }).pipe(
          Layer.provide(Layer.succeed(HostResolver.HostResolver, { resolve: () => Effect.never }))
        )
      )
    )
  )

  it.effect("allows private targets and http when configured", () =>
    Effect.gen(function* () {
      const created = yield* register(registration({ url: "http://127.0.0.1:9999/hook" }))
      assert.strictEqual(created.url, "http://127.0.0.1:9999/hook")
    }).pipe(Effect.provide(makeLayer({ respond: () => ok(), allowPrivateTargets: true })))
  )

  it.effect("lists newest first with cursors, gets and deletes, within the workspace only", () =>
    Effect.gen(function* () {
      const webhooks = yield* service
      const ids: Array<string> = []
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust("1 second")
        ids.push((yield* register(registration({ description: `#${i}` }))).id)
      }
      const foreign = yield* register(registration(), wsB)
      const first = yield* webhooks.list({ limit: 2 }).pipe(inWorkspace(wsA))
      assert.deepStrictEqual(
        first.data.map((webhook) => webhook.id),
        [ids[4], ids[3]]
      )
      assert.isString(first.nextCursor)
      const second = yield* webhooks.list({ limit: 2, cursor: first.nextCursor! }).pipe(inWorkspace(wsA))
      assert.deepStrictEqual(
        second.data.map((webhook) => webhook.id),
        [ids[2], ids[1]]
      )
      const third = yield* webhooks.list({ limit: 2, cursor: second.nextCursor! }).pipe(inWorkspace(wsA))
      assert.deepStrictEqual(
        third.data.map((webhook) => webhook.id),
        [ids[0]]
      )
      assert.isNull(third.nextCursor)
      assert.isTrue(third.data.every((webhook) => webhook.auth.type === "hmac" && webhook.auth.secret === MASK))

      assert.strictEqual((yield* webhooks.get(ids[0]!).pipe(inWorkspace(wsA))).id, ids[0])
      notFound(yield* Effect.flip(webhooks.get(foreign.id).pipe(inWorkspace(wsA))), foreign.id)
      notFound(yield* Effect.flip(webhooks.delete(foreign.id).pipe(inWorkspace(wsA))), foreign.id)
      yield* webhooks.delete(ids[0]!).pipe(inWorkspace(wsA))
      notFound(yield* Effect.flip(webhooks.get(ids[0]!).pipe(inWorkspace(wsA))), ids[0]!)
      notFound(yield* Effect.flip(webhooks.delete(ids[0]!).pipe(inWorkspace(wsA))), ids[0]!)
      assert.strictEqual((yield* webhooks.get(foreign.id).pipe(inWorkspace(wsB))).id, foreign.id)
      const listB = yield* webhooks.list({}).pipe(inWorkspace(wsB))
      assert.deepStrictEqual(
        listB.data.map((webhook) => webhook.id),
        [foreign.id]
      )
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("refuses bad paging parameters with every issue", () =>
    Effect.gen(function* () {
      const webhooks = yield* service
      const error = yield* Effect.flip(webhooks.list({ limit: 0, cursor: "nope!" }).pipe(inWorkspace(wsA)))
      assert.deepStrictEqual(
        error.issues.map((issue) => issue.path),
        ["limit", "cursor"]
      )
      const wrongKind = yield* webhooks.list({ limit: 1 }).pipe(inWorkspace(wsA))
      assert.isNull(wrongKind.nextCursor)
      const created = yield* register(registration())
      yield* register(registration())
      const page = yield* webhooks.list({ limit: 1 }).pipe(inWorkspace(wsA))
      // A webhook cursor is not a delivery cursor.
      const misuse = yield* Effect.flip(
        webhooks.deliveries(created.id, { cursor: page.nextCursor! }).pipe(inWorkspace(wsA))
      )
      assert.strictEqual(misuse._tag, "ValidationError")
      assert.strictEqual((yield* webhooks.list({ limit: 100 }).pipe(inWorkspace(wsA))).data.length, 2)
      assert.deepStrictEqual((yield* Effect.flip(webhooks.list({ limit: 101 }).pipe(inWorkspace(wsA)))).issues, [
        { path: "limit", message: "must be an integer from 1 to 100" }
      ])
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("serves the filter-field catalogue with the workspace's properties", () =>
    Effect.gen(function* () {
      const webhooks = yield* service
      const fields = yield* webhooks.filterFields("tour-created").pipe(inWorkspace(wsA))
      const region = fields.find((field) => field.path === "tour.properties.prop_region")
      assert.deepStrictEqual(region, {
        path: "tour.properties.prop_region",
        type: "select",
        selectable: true,
        operators: ["is", "is_not", "is_set", "is_not_set"],
        options: [
          { id: "opt_north", label: "North" },
          { id: "opt_south", label: "South" }
        ]
      })
      const tags = fields.find((field) => field.path === "tour.properties.prop_tags")
      assert.strictEqual(tags?.selectable, false)
      const deleted = yield* webhooks.filterFields("tour-deleted").pipe(inWorkspace(wsA))
      assert.deepStrictEqual(
        deleted.map((field) => field.path),
        ["tourId"]
      )
      assert.deepStrictEqual((yield* Effect.flip(webhooks.filterFields(undefined).pipe(inWorkspace(wsA)))).issues, [
        { path: "event", message: "is required" }
      ])
      assert.deepStrictEqual(
        (yield* Effect.flip(webhooks.filterFields("tour-exploded").pipe(inWorkspace(wsA)))).issues,
        [{ path: "event", message: "is not a catalogue event type" }]
      )
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("deliveries and alerts of another workspace's webhook are not found or empty", () =>
    Effect.gen(function* () {
      const webhooks = yield* service
      const created = yield* register(registration({ auth: hmacAuth }))
      assert.deepStrictEqual(yield* webhooks.deliveries(created.id, {}).pipe(inWorkspace(wsA)), {
        data: [],
        nextCursor: null
      })
      notFound(yield* Effect.flip(webhooks.deliveries(created.id, {}).pipe(inWorkspace(wsB))), created.id)
      assert.deepStrictEqual(yield* webhooks.alerts({ webhookId: created.id }).pipe(inWorkspace(wsB)), {
        data: [],
        nextCursor: null
      })
      assert.deepStrictEqual(yield* webhooks.alerts({ webhookId: "whk_unknown" }).pipe(inWorkspace(wsA)), {
        data: [],
        nextCursor: null
      })
    }).pipe(Effect.provide(TestLayer))
  )
})
