/**
 * Secret rotation over HTTP (contract §8), on PGlite and PostgreSQL, with the server's clock
 * moved by an `AdjustableClock`: `POST /webhooks/{id}/rotate` for the three auth types, the
 * acceptance test with the official `standardwebhooks` package (the old and the new secret
 * both verify a delivery during the overlap, only the new one after it), the Waybill scheme's
 * two signatures, and the stored row once the sweep has run: the previous secret is gone.
 */
import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import * as AdjustableClock from "@waybill/server/AdjustableClock"
import * as Sweeps from "@waybill/server/Sweeps"
import * as Authorization from "@waybill/signing/Authorization"
import * as Hmac from "@waybill/signing/Hmac"
import { Effect, Either } from "effect"
import { Webhook } from "standardwebhooks"
import { call, forEachServer, isErrorBody, keys } from "./harness.js"
import { eventually, type Received, receiver } from "./receivers.js"

const clock = AdjustableClock.make()
const whsec = () => `whsec_${randomBytes(32).toString("base64")}`
const api = (path: string, options: Parameters<typeof call>[1] = {}) => call(path, { key: keys.a, ...options })

const headersOf = (request: Received): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string") out[name] = value
  return out
}

// Registers a webhook for the test's scope: deleted at its end, so the receiver that closes
// then gets no later test's events (which would fail, and log).
const register = (json: unknown) =>
  Effect.gen(function* () {
    const created = yield* api("/webhooks", { json })
    assert.strictEqual(created.status, 201, created.text)
    yield* Effect.addFinalizer(() => Effect.asVoid(api(`/webhooks/${created.body.id}`, { method: "DELETE" })))
    return created
  })

// Publishes an event and waits for its (one) delivery to the receiver.
const deliver = (target: { for: (id: string) => Array<Received> }, id: string) =>
  Effect.gen(function* () {
    const reply = yield* api("/events", {
      json: { type: "tour-created", payload: { tour: { id, status: "planned", substatus: null, properties: {} } } }
    })
    assert.strictEqual(reply.status, 202, reply.text)
    const eventId = reply.body.id as string
    yield* eventually(
      Effect.sync(() => target.for(eventId).length === 1),
      `the delivery of ${id}`
    )
    return target.for(eventId)[0]!
  })

// The stored auth document of a webhook, straight from the database.
const storedRow = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ document: unknown; previous_secret_expires_at: string | null }>`
        SELECT document, previous_secret_expires_at FROM webhooks WHERE id = ${id}`,
      ([row]) => ({ text: JSON.stringify(row!.document), expiresAt: row!.previous_secret_expires_at })
    )
  )

forEachServer(
  "Secret rotation over HTTP",
  (it) => {
    it.scoped(
      "Standard Webhooks: old and new secret verify with the official package during the overlap, only the new after",
      () =>
        Effect.gen(function* () {
          yield* clock.setTime(Date.now())
          const target = yield* receiver()
          const [oldSecret, newSecret] = [whsec(), whsec()]
          const created = yield* register({
            url: target.url,
            events: ["tour-created"],
            auth: { type: "hmac", secret: oldSecret, scheme: "standard-webhooks" }
          })
          const id = created.body.id as string

          const rotated = yield* api(`/webhooks/${id}/rotate`, {
            json: { auth: { type: "hmac", secret: newSecret, scheme: "standard-webhooks" }, overlapSeconds: 120 }
          })
          assert.strictEqual(rotated.status, 200, rotated.text)
          const expiresAt = rotated.body.auth.previousSecretExpiresAt as number
          assert.deepStrictEqual(rotated.body, {
            ...created.body,
            auth: { type: "hmac", secret: "********", scheme: "standard-webhooks", previousSecretExpiresAt: expiresAt }
          })
          assert.approximately(expiresAt, Math.floor(Date.now() / 1000) + 120, 5)
          for (const secret of [oldSecret, newSecret]) assert.notInclude(rotated.text, secret.slice(6))
          assert.deepStrictEqual((yield* api(`/webhooks/${id}`)).body.auth, rotated.body.auth)

          const during = yield* deliver(target, "tour_rotation_during")
          const duringHeaders = headersOf(during)
          assert.strictEqual(duringHeaders["webhook-signature"]!.split(" ").length, 2)
          assert.deepStrictEqual(new Webhook(oldSecret).verify(during.body, duringHeaders), JSON.parse(during.body))
          assert.deepStrictEqual(new Webhook(newSecret).verify(during.body, duringHeaders), JSON.parse(during.body))
          assert.throws(() => new Webhook(whsec()).verify(during.body, duringHeaders), /signature/i)

          // Past the overlap (the official library's 5-minute window still holds the new time).
          yield* clock.adjust("121 seconds")
          assert.deepStrictEqual((yield* api(`/webhooks/${id}`)).body.auth, {
            type: "hmac",
            secret: "********",
            scheme: "standard-webhooks"
          })
          const after = yield* deliver(target, "tour_rotation_after")
          const afterHeaders = headersOf(after)
          assert.strictEqual(afterHeaders["webhook-signature"]!.split(" ").length, 1)
          assert.deepStrictEqual(new Webhook(newSecret).verify(after.body, afterHeaders), JSON.parse(after.body))
          assert.throws(() => new Webhook(oldSecret).verify(after.body, afterHeaders), /signature/i)

          // The sweep deletes the previous secret from the stored row.
          const before = yield* storedRow(id)
          assert.include(before.text, '"previous"')
          assert.strictEqual(Number(before.expiresAt), expiresAt)
          assert.strictEqual((yield* Sweeps.run.pipe(Effect.withClock(clock))).previousSecrets, 1)
          const swept = yield* storedRow(id)
          assert.notInclude(swept.text, "previous")
          assert.isNull(swept.expiresAt)
        })
    )

    it.scoped("Waybill scheme: X-Signature carries <new>, <previous>; a second rotation drops the older previous", () =>
      Effect.gen(function* () {
        yield* clock.setTime(Date.now())
        const target = yield* receiver()
        const [first, second, third] = ["rotation-first-0000001", "rotation-second-000002", "rotation-third-0000003"]
        const id = (yield* register({
          url: target.url,
          events: ["tour-created"],
          auth: { type: "hmac", secret: first }
        })).body.id as string
        const rotated = yield* api(`/webhooks/${id}/rotate`, { json: { auth: { type: "hmac", secret: second } } })
        assert.strictEqual(rotated.status, 200, rotated.text)
        assert.approximately(rotated.body.auth.previousSecretExpiresAt, Math.floor(Date.now() / 1000) + 86_400, 5)
        const during = yield* deliver(target, "tour_waybill_during")
        const headers = headersOf(during)
        const timestamp = Number(headers["x-signature-timestamp"])
        assert.strictEqual(
          headers["x-signature"],
          `${Hmac.sign(second, timestamp, during.body)}, ${Hmac.sign(first, timestamp, during.body)}`
        )
        const verify = (secret: Hmac.Secrets, request: Received) =>
          Either.isRight(
            Hmac.verify({
              secret,
              headers: headersOf(request),
              rawBody: request.body,
              now: Number(headersOf(request)["x-signature-timestamp"])
            })
          )
        assert.isTrue(verify(first, during) && verify(second, during))

        yield* api(`/webhooks/${id}/rotate`, { json: { auth: { type: "hmac", secret: third }, overlapSeconds: 60 } })
        const again = yield* deliver(target, "tour_waybill_again")
        assert.isTrue(verify(third, again) && verify(second, again))
        assert.isFalse(verify(first, again))
        // A receiver holding the two secrets of its own rotation accepts it.
        assert.isTrue(verify([first, third], again))
      })
    )

    it.scoped("Basic and Bearer replace at once; overlaps, other types and other workspaces are refused", () =>
      Effect.gen(function* () {
        yield* clock.setTime(Date.now())
        const target = yield* receiver()
        const bearer = (yield* register({
          url: target.url,
          events: ["tour-created"],
          auth: { type: "bearer", token: "old-bearer-token" }
        })).body.id as string
        const refused = yield* api(`/webhooks/${bearer}/rotate`, {
          json: { auth: { type: "bearer", token: "new-bearer-token" }, overlapSeconds: 3600 }
        })
        assert.isTrue(isErrorBody(refused, 400, "bad_request"), refused.text)
        assert.deepStrictEqual(
          refused.body.issues.map((issue: { path: string }) => issue.path),
          ["overlapSeconds"]
        )
        assert.notInclude(refused.text, "new-bearer-token")
        const otherType = yield* api(`/webhooks/${bearer}/rotate`, {
          json: { auth: { type: "hmac", secret: "a-secret-long-enough-123" } }
        })
        assert.deepStrictEqual(
          otherType.body.issues.map((issue: { path: string }) => issue.path),
          ["auth.type"]
        )
        const rotated = yield* api(`/webhooks/${bearer}/rotate`, {
          json: { auth: { type: "bearer", token: "new-bearer-token" } }
        })
        assert.strictEqual(rotated.status, 200, rotated.text)
        assert.deepStrictEqual(rotated.body.auth, { type: "bearer", token: "********" })
        const delivered = yield* deliver(target, "tour_bearer")
        assert.strictEqual(delivered.headers.authorization, Authorization.bearerAuthorization("new-bearer-token"))

        const basic = (yield* register({
          url: target.url,
          events: ["tour-deleted"],
          auth: { type: "basic", username: "ops", password: "old-password" }
        })).body.id as string
        const basicRotated = yield* api(`/webhooks/${basic}/rotate`, {
          json: { auth: { type: "basic", username: "ops", password: "new-password" }, overlapSeconds: 0 }
        })
        assert.deepStrictEqual(basicRotated.body.auth, { type: "basic", username: "ops", password: "********" })

        const foreign = yield* call(`/webhooks/${bearer}/rotate`, {
          key: keys.b,
          json: { auth: { type: "bearer", token: "stolen-token" } }
        })
        assert.isTrue(isErrorBody(foreign, 404, "not_found"), foreign.text)
        const anonymous = yield* call(`/webhooks/${bearer}/rotate`, { json: { auth: { type: "bearer", token: "x" } } })
        assert.isTrue(isErrorBody(anonymous, 401, "unauthorized"), anonymous.text)
        // Nothing refused changed the webhook: the new token still holds.
        const again = yield* deliver(target, "tour_bearer_again")
        assert.strictEqual(again.headers.authorization, Authorization.bearerAuthorization("new-bearer-token"))
      })
    )
  },
  {},
  { clock }
)
