/**
 * `WebhookService.rotate` (contract §8 "Secret rotation") with the dispatcher, on the in-memory
 * ports: during an overlap attempts carry both signatures (new first), after it only the new
 * one; a rotation during an overlap drops the older previous secret; Basic and Bearer replace
 * at once; the end of the overlap deletes the previous secret from storage; every rule at its
 * path, and no secret in any answer or error.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Issue from "@waybill/core/Issue"
import * as Authorization from "@waybill/signing/Authorization"
import * as Hmac from "@waybill/signing/Hmac"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { SecretBox } from "../src/SecretBox.js"
import { sweepExpiredSecrets } from "../src/SecretRotation.js"
import { MASK, previousSecretContext, sealedSecretOf, secretContext } from "../src/Webhook.js"
import { WebhookRepository } from "../src/WebhookRepository.js"
import { WebhookNotFound, WebhookService } from "../src/WebhookService.js"
import {
  basicAuth,
  bearerAuth,
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

const rotate = (id: string, input: unknown, workspaceId = wsA) =>
  Effect.flatMap(WebhookService, (service) => service.rotate(id, input)).pipe(inWorkspace(workspaceId))

const get = (id: string) => Effect.flatMap(WebhookService, (service) => service.get(id)).pipe(inWorkspace(wsA))

const issuesOf = (error: unknown) => (error as { issues: ReadonlyArray<Issue.Issue> }).issues.map((i) => i.path)

// The stored webhook: its revision, its secret and its previous secret (opened), as storage has them.
const stored = (id: string) =>
  Effect.gen(function* () {
    const webhook = Option.getOrThrow(yield* Effect.flatMap(WebhookRepository, (r) => r.get(wsA, id)))
    const box = yield* SecretBox
    const secret = yield* box.open(sealedSecretOf(webhook.auth), secretContext(id, webhook.auth.type))
    const previous =
      webhook.auth.type === "hmac" && webhook.auth.previous !== undefined
        ? {
            secret: Redacted.value(yield* box.open(webhook.auth.previous.secret, previousSecretContext(id))),
            expiresAt: webhook.auth.previous.expiresAt
          }
        : undefined
    return { revision: webhook.revision, secret: Redacted.value(secret), previous }
  })

// Publishes one event and attempts it; answers the headers of that attempt.
const deliverOne = Effect.gen(function* () {
  yield* publish("tour-created", { tour: tour() })
  yield* settle
  const sent = yield* requests
  return sent[sent.length - 1]!.request
})

const verifiesWith = (secret: string, request: { headers: Record<string, string>; body: string }) =>
  Either.isRight(
    Hmac.verify({
      secret,
      headers: request.headers,
      rawBody: request.body,
      now: Number(request.headers["X-Signature-Timestamp"])
    })
  )

const newSecret = "the-new-shared-secret-0002"
const newestSecret = "the-newest-shared-secret-0003"

describe("WebhookService.rotate (hmac)", () => {
  it.effect("signs with both secrets during the overlap (new first), then with the new one only", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const created = yield* register(registration())
      const rotated = yield* rotate(created.id, { auth: { type: "hmac", secret: newSecret } })
      const expiresAt = NOW / 1000 + 86_400
      assert.deepStrictEqual(rotated, {
        ...created,
        auth: { type: "hmac", secret: MASK, scheme: "waybill", previousSecretExpiresAt: expiresAt }
      })
      assert.deepStrictEqual((yield* get(created.id)).auth, rotated.auth)

      const during = yield* deliverOne
      const timestamp = Number(during.headers["X-Signature-Timestamp"])
      assert.strictEqual(
        during.headers["X-Signature"],
        `${Hmac.sign(newSecret, timestamp, during.body)}, ${Hmac.sign(secrets.hmac, timestamp, during.body)}`
      )
      assert.isTrue(verifiesWith(newSecret, during))
      assert.isTrue(verifiesWith(secrets.hmac, during))

      // The last second of the overlap still carries both; its end, only the new one.
      yield* TestClock.setTime((expiresAt - 1) * 1000)
      assert.strictEqual((yield* deliverOne).headers["X-Signature"]!.split(", ").length, 2)
      yield* TestClock.setTime(expiresAt * 1000)
      const after = yield* deliverOne
      assert.strictEqual(after.headers["X-Signature"], Hmac.sign(newSecret, expiresAt, after.body))
      assert.isFalse(verifiesWith(secrets.hmac, after))
      assert.deepStrictEqual((yield* get(created.id)).auth, { type: "hmac", secret: MASK, scheme: "waybill" })
      assert.deepStrictEqual(leakedSecrets(renderings([rotated, yield* get(created.id)])), [])
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("the sweep deletes an expired previous secret from storage and raises the revision", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const created = yield* register(registration())
      yield* rotate(created.id, { auth: { type: "hmac", secret: newSecret }, overlapSeconds: 60 })
      assert.deepStrictEqual(yield* stored(created.id), {
        revision: 2,
        secret: newSecret,
        previous: { secret: secrets.hmac, expiresAt: NOW / 1000 + 60 }
      })
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual(yield* sweepExpiredSecrets, 0)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* sweepExpiredSecrets, 1)
      assert.deepStrictEqual(yield* stored(created.id), { revision: 3, secret: newSecret, previous: undefined })
      assert.strictEqual(yield* sweepExpiredSecrets, 0)
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("a rotation during an overlap drops the older previous secret; overlap 0 keeps none", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const created = yield* register(registration())
      yield* rotate(created.id, { auth: { type: "hmac", secret: newSecret } })
      yield* TestClock.adjust("1 hour")
      const again = yield* rotate(created.id, { auth: { type: "hmac", secret: newestSecret }, overlapSeconds: 600 })
      assert.strictEqual(again.auth.type === "hmac" && again.auth.previousSecretExpiresAt, NOW / 1000 + 3_600 + 600)
      const request = yield* deliverOne
      assert.strictEqual(request.headers["X-Signature"]!.split(", ").length, 2)
      assert.isTrue(verifiesWith(newestSecret, request))
      assert.isTrue(verifiesWith(newSecret, request))
      assert.isFalse(verifiesWith(secrets.hmac, request))

      const immediate = yield* rotate(created.id, { auth: { type: "hmac", secret: secrets.hmac }, overlapSeconds: 0 })
      assert.deepStrictEqual(immediate.auth, { type: "hmac", secret: MASK, scheme: "waybill" })
      assert.deepStrictEqual((yield* stored(created.id)).previous, undefined)
      const now = yield* deliverOne
      assert.strictEqual(now.headers["X-Signature"]!.split(", ").length, 1)
      assert.isTrue(verifiesWith(secrets.hmac, now))
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("the retry of a delivery attempted before the rotation is signed with the new secrets", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const created = yield* register(registration())
      const first = yield* deliverOne
      assert.isTrue(verifiesWith(secrets.hmac, first))
      yield* rotate(created.id, { auth: { type: "hmac", secret: newSecret }, overlapSeconds: 0 })
      yield* TestClock.adjust("1 minute")
      yield* settle
      const sent = yield* requests
      const retry = sent[1]!.request
      assert.strictEqual(retry.headers["X-Delivery-Attempt"], "2")
      assert.isTrue(verifiesWith(newSecret, retry))
      assert.isFalse(verifiesWith(secrets.hmac, retry))
    }).pipe(Effect.provide(makeLayer({ respond: (_, index) => ok(index === 0 ? 500 : 200) })))
  )

  it.effect("Standard Webhooks: v1,<new> v1,<previous>, each verified by the official library", () =>
    Effect.gen(function* () {
      // The official library checks the timestamp against the wall clock: attempt at its time.
      const now = Date.now()
      yield* TestClock.setTime(now)
      const [oldWhsec, newWhsec] = [1, 2].map((fill) => `whsec_${Buffer.alloc(32, fill).toString("base64")}`)
      const created = yield* register(
        registration({ auth: { type: "hmac", secret: oldWhsec, scheme: "standard-webhooks" } })
      )
      // The scheme may be omitted: it is the webhook's.
      const rotated = yield* rotate(created.id, { auth: { type: "hmac", secret: newWhsec }, overlapSeconds: 120 })
      assert.deepStrictEqual(rotated.auth, {
        type: "hmac",
        secret: MASK,
        scheme: "standard-webhooks",
        previousSecretExpiresAt: Math.floor(now / 1000) + 120
      })
      const request = yield* deliverOne
      assert.match(request.headers["webhook-signature"]!, /^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/)
      assert.doesNotThrow(() => new StandardWebhook(newWhsec).verify(request.body, request.headers))
      assert.doesNotThrow(() => new StandardWebhook(oldWhsec).verify(request.body, request.headers))
      const stranger = `whsec_${Buffer.alloc(32, 3).toString("base64")}`
      assert.throws(() => new StandardWebhook(stranger).verify(request.body, request.headers))

      const wrongScheme = yield* Effect.flip(
        rotate(created.id, { auth: { type: "hmac", secret: newWhsec, scheme: "waybill" } })
      )
      assert.deepStrictEqual(issuesOf(wrongScheme), ["auth.scheme"])
      const plain = yield* Effect.flip(rotate(created.id, { auth: { type: "hmac", secret: newSecret } }))
      assert.deepStrictEqual(issuesOf(plain), ["auth.secret"])
      assert.deepStrictEqual(leakedSecrets(renderings([wrongScheme, plain])), [])
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )
})

describe("WebhookService.rotate (basic, bearer)", () => {
  it.effect("replaces the credentials at once; an overlap above 0 is refused at overlapSeconds", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const bearer = yield* register(registration({ auth: bearerAuth }))
      const refused = yield* Effect.flip(
        rotate(bearer.id, { auth: { type: "bearer", token: "new-token-0001" }, overlapSeconds: 60 })
      )
      assert.deepStrictEqual(issuesOf(refused), ["overlapSeconds"])
      assert.include((refused as Error).message, "replace the old at once")
      const rotated = yield* rotate(bearer.id, { auth: { type: "bearer", token: "new-token-0001" }, overlapSeconds: 0 })
      assert.deepStrictEqual(rotated.auth, { type: "bearer", token: MASK })
      const request = yield* deliverOne
      assert.strictEqual(request.headers.Authorization, Authorization.bearerAuthorization("new-token-0001"))

      const basic = yield* register(registration({ auth: basicAuth, events: ["tour-deleted"] }))
      const renamed = yield* rotate(basic.id, { auth: { type: "basic", username: "ops2", password: "new-pass" } })
      assert.deepStrictEqual(renamed.auth, { type: "basic", username: "ops2", password: MASK })
      assert.deepStrictEqual((yield* stored(basic.id)).secret, "new-pass")
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )
})

describe("WebhookService.rotate: rules", () => {
  it.effect("refuses another type, the mask, bad secrets and overlaps at their paths, never quoting a secret", () =>
    Effect.gen(function* () {
      const created = yield* register(registration())
      const cases: ReadonlyArray<readonly [unknown, ReadonlyArray<string>]> = [
        [{ auth: { type: "bearer", token: "a-token" } }, ["auth.type"]],
        [{ auth: { type: "hmac", secret: MASK } }, ["auth.secret"]],
        [{ auth: { type: "hmac", secret: "short" } }, ["auth.secret"]],
        [{ auth: { type: "hmac" } }, ["auth.secret"]],
        [{}, ["auth"]],
        [{ auth: "x" }, ["auth"]],
        [{ auth: { type: "hmac", secret: newSecret }, overlapSeconds: 604_801 }, ["overlapSeconds"]],
        [{ auth: { type: "hmac", secret: newSecret }, overlapSeconds: -1 }, ["overlapSeconds"]],
        [{ auth: { type: "hmac", secret: newSecret }, overlapSeconds: 1.5 }, ["overlapSeconds"]],
        [{ auth: { type: "hmac", secret: newSecret }, overlapSeconds: "60" }, ["overlapSeconds"]],
        [{ auth: { type: "hmac", secret: newSecret }, extra: 1 }, ["extra"]],
        [{ auth: { type: "hmac", secret: `${newSecret}\u0000` } }, ["auth.secret"]],
        [[], [""]]
      ]
      for (const [input, paths] of cases) {
        const error = yield* Effect.flip(rotate(created.id, input))
        assert.deepStrictEqual(issuesOf(error), paths, JSON.stringify(input))
        assert.deepStrictEqual(leakedSecrets(renderings(error)), [])
        assert.notInclude(renderings(error).join(" "), newSecret)
      }
      const week = yield* rotate(created.id, { auth: { type: "hmac", secret: newSecret }, overlapSeconds: 604_800 })
      assert.isDefined(week.auth.type === "hmac" && week.auth.previousSecretExpiresAt)
      // Nothing refused changed the webhook: one rotation, revision 2.
      assert.strictEqual((yield* stored(created.id)).revision, 2)
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("another workspace's webhook, or an unknown id, is not found (before the body is judged)", () =>
    Effect.gen(function* () {
      const created = yield* register(registration())
      assert.instanceOf(yield* Effect.flip(rotate(created.id, { auth: hmacNew }, wsB)), WebhookNotFound)
      assert.instanceOf(yield* Effect.flip(rotate("whk_missing", {})), WebhookNotFound)
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("the console's edit keeps an overlap with the secret; a new secret or scheme ends it", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const edit = (id: string, input: unknown) =>
        Effect.flatMap(WebhookService, (service) => service.update(id, input)).pipe(inWorkspace(wsA))
      const created = yield* register(registration())
      yield* rotate(created.id, { auth: hmacNew })
      const kept = yield* edit(created.id, registration({ auth: { type: "hmac" }, description: "moved" }))
      assert.strictEqual(kept.auth.type === "hmac" && kept.auth.previousSecretExpiresAt, NOW / 1000 + 86_400)
      assert.deepStrictEqual((yield* stored(created.id)).previous?.secret, secrets.hmac)
      const retyped = yield* edit(created.id, registration({ auth: { type: "hmac", secret: newestSecret } }))
      assert.deepStrictEqual(retyped.auth, { type: "hmac", secret: MASK, scheme: "waybill" })
      assert.deepStrictEqual(yield* stored(created.id), { revision: 4, secret: newestSecret, previous: undefined })
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("a current secret that does not open (another server key) can be replaced, not kept signing", () =>
    Effect.gen(function* () {
      const created = yield* register(registration())
      const repository = yield* WebhookRepository
      const stale = Option.getOrThrow(yield* repository.get(wsA, created.id))
      const sealedElsewhere = yield* Effect.flatMap(SecretBox, (box) =>
        box.seal(Redacted.make("sealed-for-another-place"), "elsewhere")
      )
      yield* repository.update({ ...stale, auth: { type: "hmac", secret: sealedElsewhere, scheme: "waybill" } })
      const refused = yield* Effect.flip(rotate(created.id, { auth: hmacNew }))
      assert.deepStrictEqual(issuesOf(refused), ["overlapSeconds"])
      const replaced = yield* rotate(created.id, { auth: hmacNew, overlapSeconds: 0 })
      assert.deepStrictEqual(replaced.auth, { type: "hmac", secret: MASK, scheme: "waybill" })
      assert.strictEqual((yield* stored(created.id)).secret, newSecret)
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )

  it.effect("a change computed from an older revision is not stored (storage compares revisions)", () =>
    Effect.gen(function* () {
      const created = yield* register(registration())
      const repository = yield* WebhookRepository
      const before = Option.getOrThrow(yield* repository.get(wsA, created.id))
      yield* rotate(created.id, { auth: hmacNew })
      assert.isTrue(Option.isNone(yield* repository.update({ ...before, description: "stale" })))
      assert.strictEqual((yield* stored(created.id)).secret, newSecret)
    }).pipe(Effect.provide(makeLayer({ respond: () => ok() })))
  )
})

const hmacNew = { type: "hmac", secret: newSecret } as const
