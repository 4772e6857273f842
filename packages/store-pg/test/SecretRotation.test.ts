/**
 * Secret rotation on PostgreSQL and PGlite (contract §8): the previous secret is stored sealed
 * beside the new one, another process's store sees the rotation at its next claim (the revision
 * moves on), and once the overlap has ended the sweep deletes the previous secret from the
 * stored row, which the test reads directly.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventIntake from "@waybill/events/EventIntake"
import { DeliveryStore as DeliveryStoreTag } from "@waybill/webhooks/DeliveryStore"
import { Dispatcher } from "@waybill/webhooks/Dispatcher"
import * as HttpSender from "@waybill/webhooks/HttpSender"
import * as SecretBox from "@waybill/webhooks/SecretBox"
import { sweepExpiredSecrets } from "@waybill/webhooks/SecretRotation"
import { WebhookRepository as WebhookRepositoryTag } from "@waybill/webhooks/WebhookRepository"
import { WebhookService } from "@waybill/webhooks/WebhookService"
import { Effect, Layer, Option, Redacted, Schema, TestClock } from "effect"
import * as PgDeliveryStore from "../src/PgDeliveryStore.js"
import * as Testing from "../src/Testing.js"
import { forEachBackend, webhookStack } from "./harness.js"

const NOW = 1_798_000_000_000
const ws = Schema.decodeSync(WorkspaceId)("rotation")
const [first, second, third] = ["first-secret-0123456789", "second-secret-0123456789", "third-secret-0123456789"]

const as = Effect.provideService(CurrentWorkspace, { id: ws, apiKeyId: "k" })
const service = <A, E>(f: (s: WebhookService["Type"]) => Effect.Effect<A, E, CurrentWorkspace>) =>
  Effect.flatMap(WebhookService, f).pipe(as)

interface Row {
  readonly document: unknown
  readonly revision: number
  readonly previous_secret_expires_at: number | null
}
const row = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<Row>`SELECT document, revision, previous_secret_expires_at FROM webhooks WHERE id = ${id}`,
      ([found]) => ({
        text: JSON.stringify(found!.document),
        auth: (found!.document as { auth: { secret: string; previous?: { secret: string; expiresAt: number } } }).auth,
        revision: found!.revision,
        expiresAt: found!.previous_secret_expires_at === null ? null : Number(found!.previous_secret_expires_at)
      })
    )
  )

forEachBackend(
  "Secret rotation storage",
  webhookStack(HttpSender.layerScripted(() => Effect.succeed({ statusCode: 500 }))),
  (it) => {
    it.effect("stores the previous secret sealed, shows it to other processes, and deletes it after the overlap", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const created = yield* service((s) =>
          s.register({
            url: "https://hooks.example.org/r",
            events: ["tour-created"],
            auth: { type: "hmac", secret: first }
          })
        )
        yield* EventIntake.publish({
          type: "tour-created",
          payload: { tour: { id: "tour_r", status: "planned", substatus: null, properties: {} } }
        }).pipe(as)
        yield* Effect.zipRight(
          Testing.eventsVisible,
          Effect.flatMap(Dispatcher, (dispatcher) => dispatcher.fanOutAll)
        )
        // Another process's store, with its own cache of targets, claims before and after.
        const other = yield* Layer.build(PgDeliveryStore.layer).pipe(
          Effect.map((context) => context.unsafeMap.get(DeliveryStoreTag.key) as DeliveryStoreTag["Type"])
        )
        let lease = 0
        const claimTarget = Effect.suspend(() =>
          other.claimDue({
            now: NOW * 2,
            limit: 1,
            maxPerWebhook: 1,
            roomByWebhook: new Map(),
            leaseUntil: NOW * 2 + 1,
            leaseToken: `token-${++lease}`
          })
        ).pipe(Effect.map((claimed) => claimed[0]!.target))
        // Each claim above leases until NOW * 2 + 1; the next one looks later still.
        const claimAfter = (n: number) =>
          other
            .claimDue({
              now: NOW * 2 + n,
              limit: 1,
              maxPerWebhook: 1,
              roomByWebhook: new Map(),
              leaseUntil: NOW * 2 + n + 1,
              leaseToken: `token-after-${n}`
            })
            .pipe(Effect.map((claimed) => claimed[0]!.target))
        assert.strictEqual((yield* claimTarget).revision, 1)

        const rotated = yield* service((s) => s.rotate(created.id, { auth: { type: "hmac", secret: second } }))
        const expiresAt = NOW / 1000 + 86_400
        assert.deepStrictEqual(rotated.auth, {
          type: "hmac",
          secret: "********",
          scheme: "waybill",
          previousSecretExpiresAt: expiresAt
        })
        const during = yield* row(created.id)
        assert.strictEqual(during.revision, 2)
        assert.strictEqual(during.expiresAt, expiresAt)
        assert.match(during.auth.previous!.secret, /^v1\./)
        assert.strictEqual(during.auth.previous!.expiresAt, expiresAt)
        for (const plain of [first, second]) assert.notInclude(during.text, plain)
        const target = yield* claimAfter(10)
        assert.strictEqual(target.revision, 2)
        const stored: unknown = { ...(yield* row(created.id)).auth, scheme: "waybill" }
        assert.deepStrictEqual(target.auth as unknown, stored)

        // A rotation during the overlap: the replaced secret becomes the previous one, sealed
        // anew; the older previous secret is gone from the row.
        yield* TestClock.adjust("1 hour")
        yield* service((s) => s.rotate(created.id, { auth: { type: "hmac", secret: third }, overlapSeconds: 60 }))
        const again = yield* row(created.id)
        assert.strictEqual(again.revision, 3)
        assert.strictEqual(again.expiresAt, NOW / 1000 + 3_600 + 60)
        assert.notInclude(again.text, during.auth.previous!.secret)
        const box = yield* SecretBox.SecretBox
        assert.strictEqual(
          Redacted.value(yield* box.open(again.auth.previous!.secret, `${created.id}/auth.previousSecret`)),
          second
        )

        yield* TestClock.adjust("59 seconds")
        assert.strictEqual(yield* sweepExpiredSecrets, 0)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* sweepExpiredSecrets, 1)
        const swept = yield* row(created.id)
        assert.strictEqual(swept.revision, 4)
        assert.strictEqual(swept.expiresAt, null)
        assert.isUndefined(swept.auth.previous)
        assert.notInclude(swept.text, "previous")
        assert.notInclude(swept.text, again.auth.previous!.secret)
        const afterSweep = yield* claimAfter(20)
        assert.strictEqual(afterSweep.revision, 4)
        assert.isTrue(afterSweep.auth.type === "hmac" && afterSweep.auth.previous === undefined)
        assert.deepStrictEqual((yield* service((s) => s.get(created.id))).auth, {
          type: "hmac",
          secret: "********",
          scheme: "waybill"
        })
      }).pipe(Effect.scoped)
    )

    it.effect("an update computed from an older revision changes nothing", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const created = yield* service((s) =>
          s.register({
            url: "https://hooks.example.org/s",
            events: ["tour-created"],
            auth: { type: "bearer", token: "t-1" }
          })
        )
        const repository = yield* WebhookRepositoryTag
        const before = Option.getOrThrow(yield* repository.get(ws, created.id))
        yield* service((s) => s.rotate(created.id, { auth: { type: "bearer", token: "t-2" } }))
        assert.isTrue(Option.isNone(yield* repository.update({ ...before, description: "stale" })))
        const stored = Option.getOrThrow(yield* repository.get(ws, created.id))
        assert.deepStrictEqual([stored.revision, stored.description], [2, null])
        const box = yield* SecretBox.SecretBox
        const token = stored.auth.type === "bearer" ? stored.auth.token : assert.fail("bearer")
        assert.strictEqual(Redacted.value(yield* box.open(token, `${created.id}/auth.token`)), "t-2")
      })
    )
  }
)
