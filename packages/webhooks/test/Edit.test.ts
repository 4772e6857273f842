/**
 * `WebhookService.update`, the console's edit (contract §5): secrets kept unless retyped, the
 * same validation as a registration, and attempts after the edit use the new settings,
 * including retries of deliveries made before it.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Issue from "@waybill/core/Issue"
import * as Hmac from "@waybill/signing/Hmac"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { SecretBox } from "../src/SecretBox.js"
import { MASK, sealedSecretOf, secretContext } from "../src/Webhook.js"
import { WebhookRepository } from "../src/WebhookRepository.js"
import { WebhookNotFound, WebhookService } from "../src/WebhookService.js"
import {
  basicAuth,
  deliveriesOf,
  inWorkspace,
  leakedSecrets,
  makeLayer,
  NOW,
  ok,
  publish,
  register,
  registration,
  renderings,
  requests,
  secrets,
  settle,
  tour,
  wsA,
  wsB
} from "./fixtures.js"

const update = (id: string, input: unknown, workspaceId = wsA) =>
  Effect.flatMap(WebhookService, (service) => service.update(id, input)).pipe(inWorkspace(workspaceId))

// The webhook's stored revision and its secret, opened.
const stored = (id: string) =>
  Effect.gen(function* () {
    const webhook = Option.getOrThrow(yield* Effect.flatMap(WebhookRepository, (r) => r.get(wsA, id)))
    const box = yield* SecretBox
    const secret = yield* box.open(sealedSecretOf(webhook.auth), secretContext(id, webhook.auth.type))
    return { revision: webhook.revision, type: webhook.auth.type, secret: Redacted.value(secret) }
  })

const issuesOf = (error: unknown) => (error as { issues: ReadonlyArray<Issue.Issue> }).issues

describe("WebhookService.update", () => {
  it.effect("keeps the stored secret when it is omitted or masked; raises the revision; answers masked", () =>
    Effect.gen(function* () {
      const created = yield* register(registration())
      const omitted = yield* update(created.id, registration({ auth: { type: "hmac" }, description: "moved" }))
      assert.deepStrictEqual(omitted, { ...created, description: "moved" })
      const masked = yield* update(created.id, registration({ auth: { type: "hmac", secret: MASK } }))
      assert.deepStrictEqual(masked.auth, { type: "hmac", secret: MASK, scheme: "waybill" })
      assert.deepStrictEqual(yield* stored(created.id), { revision: 3, type: "hmac", secret: secrets.hmac })
      assert.deepStrictEqual(leakedSecrets(renderings([omitted, masked])), [])

      const basic = yield* register(registration({ auth: basicAuth }))
      const renamed = yield* update(basic.id, registration({ auth: { type: "basic", username: "ops2" } }))
      assert.deepStrictEqual(renamed.auth, { type: "basic", username: "ops2", password: MASK })
      assert.deepStrictEqual(yield* stored(basic.id), { revision: 2, type: "basic", secret: secrets.password })
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("an omitted scheme stays as stored; a named one replaces it, and a kept secret must fit it", () =>
    Effect.gen(function* () {
      const whsec = `whsec_${Buffer.alloc(32, 5).toString("base64")}`
      const standard = yield* register(
        registration({ auth: { type: "hmac", secret: whsec, scheme: "standard-webhooks" } })
      )
      const moved = yield* update(standard.id, registration({ auth: { type: "hmac" }, description: "moved" }))
      assert.deepStrictEqual(moved.auth, { type: "hmac", secret: MASK, scheme: "standard-webhooks" })
      const back = yield* update(standard.id, registration({ auth: { type: "hmac", scheme: "waybill" } }))
      assert.deepStrictEqual(back.auth, { type: "hmac", secret: MASK, scheme: "waybill" })
      assert.deepStrictEqual(yield* stored(standard.id), { revision: 3, type: "hmac", secret: whsec })

      const plain = yield* register(registration())
      const refused = yield* Effect.flip(
        update(plain.id, registration({ auth: { type: "hmac", scheme: "standard-webhooks" } }))
      )
      assert.deepStrictEqual(
        issuesOf(refused).map((issue) => issue.path),
        ["auth.secret"]
      )
      assert.deepStrictEqual(leakedSecrets(renderings([moved, back, refused])), [])
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("a new secret replaces the stored one; a changed type needs its secret, at its path", () =>
    Effect.gen(function* () {
      const created = yield* register(registration())
      const retyped = "a brand new shared secret"
      yield* update(created.id, registration({ auth: { type: "hmac", secret: retyped } }))
      assert.deepStrictEqual(yield* stored(created.id), { revision: 2, type: "hmac", secret: retyped })

      for (const auth of [{ type: "bearer" }, { type: "bearer", token: MASK }]) {
        const refused = yield* Effect.flip(update(created.id, registration({ auth })))
        assert.deepStrictEqual(
          issuesOf(refused).map((issue) => issue.path),
          ["auth.token"]
        )
      }
      const bad = yield* Effect.flip(
        update(created.id, { url: "http://hooks.example.org", events: [], auth: { type: "hmac" } })
      )
      assert.deepStrictEqual(
        issuesOf(bad).map((issue) => issue.path),
        ["url", "events"]
      )
      assert.deepStrictEqual(yield* stored(created.id), { revision: 2, type: "hmac", secret: retyped })
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("another workspace's webhook, or an unknown id, is not found", () =>
    Effect.gen(function* () {
      const created = yield* register(registration())
      const foreign = yield* Effect.flip(update(created.id, registration(), wsB))
      assert.instanceOf(foreign, WebhookNotFound)
      assert.instanceOf(yield* Effect.flip(update("whk_missing", registration())), WebhookNotFound)
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("the retry of a delivery made before the edit goes to the new URL, signed with the kept secret", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const created = yield* register(registration())
      const event = yield* publish("tour-created", { tour: tour() })
      yield* settle
      yield* update(created.id, registration({ url: "https://hooks.example.org/moved", auth: { type: "hmac" } }))
      yield* TestClock.adjust("1 minute")
      yield* settle
      const sent = yield* requests
      assert.deepStrictEqual(
        sent.map((entry) => entry.request.url),
        ["https://hooks.example.org/waybill", "https://hooks.example.org/moved"]
      )
      const retry = sent[1]!.request
      assert.strictEqual(retry.body, event.body)
      assert.strictEqual(retry.headers["X-Delivery-Id"], sent[0]!.request.headers["X-Delivery-Id"])
      assert.strictEqual(retry.headers["X-Delivery-Attempt"], "2")
      const verified = Hmac.verify({
        secret: secrets.hmac,
        headers: retry.headers,
        rawBody: retry.body,
        now: Number(retry.headers["X-Signature-Timestamp"])
      })
      assert.isTrue(Either.isRight(verified))
      const [delivery] = yield* deliveriesOf(created.id)
      assert.strictEqual(delivery!.status, "succeeded")
    }).pipe(Effect.provide(makeLayer({ respond: (_, index) => ok(index === 0 ? 500 : 200) })))
  )

  it.effect("an edited filter decides the next fan-out (compiled filters follow the revision)", () =>
    Effect.gen(function* () {
      const onlyDone = {
        "tour-created": { conditions: [{ field: "tour.status", operator: "equals", value: "completed" }] }
      }
      const created = yield* register(registration({ filters: onlyDone }))
      yield* publish("tour-created", { tour: tour() })
      yield* settle
      assert.strictEqual((yield* requests).length, 0)
      yield* update(created.id, registration({ auth: { type: "hmac" } }))
      yield* publish("tour-created", { tour: tour() })
      yield* settle
      assert.strictEqual((yield* requests).length, 1)
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )
})
