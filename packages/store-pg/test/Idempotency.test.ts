/**
 * Idempotent requests on PostgreSQL and PGlite (contract §8): the kept answer is written in the
 * same statement as the draft or event (one fails, neither is written), replays create nothing,
 * two "processes" (independent service stacks: their own group commits and keys in flight) racing
 * with one key create once, keyed and plain events share a statement, and the sweep deletes
 * expired answers in bounded steps.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import * as Idempotency from "@waybill/core/Idempotency"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import { DraftService, layer as DraftServiceLayer } from "@waybill/drafts/DraftService"
import * as ProductEvaluator from "@waybill/drafts/ProductEvaluator"
import * as ReferenceData from "@waybill/drafts/ReferenceData"
import * as EventIntake from "@waybill/events/EventIntake"
import { EventOutbox as EventOutboxTag } from "@waybill/events/EventOutbox"
import * as PropertyDefinition from "@waybill/events/PropertyDefinition"
import * as HostResolver from "@waybill/webhooks/HostResolver"
import * as SecretBox from "@waybill/webhooks/SecretBox"
import { WebhookService, layer as WebhookServiceLayer } from "@waybill/webhooks/WebhookService"
import { type Context, Effect, Either, Exit, Layer, Option, Schema, TestClock } from "effect"
import * as PgDeliveryStore from "../src/PgDeliveryStore.js"
import * as PgDraftRepository from "../src/PgDraftRepository.js"
import * as PgEventOutbox from "../src/PgEventOutbox.js"
import * as PgFailureAlerts from "../src/PgFailureAlerts.js"
import * as PgIdempotencyStore from "../src/PgIdempotencyStore.js"
import * as PgWebhookRepository from "../src/PgWebhookRepository.js"
import { forEachBackend } from "./harness.js"

const NOW = 1_798_000_000_000
const wsA = Schema.decodeSync(WorkspaceId)("idem-a")
const wsB = Schema.decodeSync(WorkspaceId)("idem-b")

const referenceData: ReferenceData.ReferenceDataSet = {
  transportShapes: [
    { id: "shape_order", name: "Order", outputs: ["order"], recurring: { enabled: false }, requiredFields: [] }
  ],
  vehicleClasses: [],
  products: []
}

// What one server process holds: its services over the shared database, with their own group
// commits and their own keys in flight.
const processLayer = Layer.mergeAll(
  DraftServiceLayer,
  WebhookServiceLayer({ allowPrivateTargets: true }),
  EventIntake.layerGroupCommit,
  Idempotency.layer
).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      PgDraftRepository.layer,
      PgEventOutbox.layer,
      PgIdempotencyStore.layer,
      PgWebhookRepository.layer,
      PgDeliveryStore.layer,
      PgFailureAlerts.layer,
      SecretBox.layerMemory,
      HostResolver.layerNone,
      PropertyDefinition.layerFixed([]),
      ReferenceData.layerMemory(referenceData),
      ProductEvaluator.layerReference
    )
  )
)

type Process = Context.Context<Layer.Layer.Success<typeof processLayer>>

const as = (workspaceId: WorkspaceId) => Effect.provideService(CurrentWorkspace, { id: workspaceId, apiKeyId: "k" })

const inProcess =
  (process: Process, workspaceId: WorkspaceId = wsA) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    effect.pipe(as(workspaceId), Effect.provide(process))

const draft = (name: string) => ({ origin: "manual", status: "draft", transportShapeId: "shape_order", name })

const count = (query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: string }>`SELECT count(*)::text AS n FROM ${sql.literal(query)}`, ([row]) => Number(row!.n))
  )

const drafts = (name: string) => count(`drafts WHERE document->>'name' = '${name}'`)
const events = (marker: string) => count(`events WHERE body LIKE '%${marker}%'`)
const keys = (key: string) => count(`idempotency_keys WHERE key = '${key}'`)

const tourCreated = (id: string) => ({
  type: "tour-created",
  payload: { tour: { id, status: "planned", substatus: null, properties: {} } }
})

forEachBackend(
  "Idempotent requests on storage",
  (database) => processLayer.pipe(Layer.provideMerge(database)),
  (it) => {
    it.effect("a draft with a key is created once; replays and other workspaces; another body is refused", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const process = yield* Effect.context<Layer.Layer.Success<typeof processLayer>>()
        const create = (body: unknown, key: string, workspaceId = wsA) =>
          Effect.flatMap(DraftService, (service) => service.createIdempotent(body, key)).pipe(
            inProcess(process, workspaceId)
          )
        const first = yield* create(draft("Idem draft"), "draft-key-1")
        assert.strictEqual(first.replayed, false)
        assert.strictEqual(first.status, 201)
        assert.strictEqual(JSON.parse(first.body).id, first.value.id)
        const again = yield* create(JSON.parse(JSON.stringify(draft("Idem draft"), null, 4)), "draft-key-1")
        assert.deepStrictEqual(again, { ...first, replayed: true })
        assert.strictEqual(yield* drafts("Idem draft"), 1)
        // One transport-drafts-created event for the one draft.
        assert.strictEqual(yield* events(first.value.id), 1)
        const other = yield* Effect.flip(create(draft("Another draft"), "draft-key-1"))
        assert.instanceOf(other, Idempotency.IdempotencyKeyReused)
        assert.strictEqual(yield* drafts("Another draft"), 0)
        const elsewhere = yield* create(draft("Idem draft"), "draft-key-1", wsB)
        assert.strictEqual(elsewhere.replayed, false)
        assert.notStrictEqual(elsewhere.value.id, first.value.id)
        // A refused draft keeps nothing; the key then serves a corrected one.
        const refused = yield* Effect.flip(create({ origin: "manual" }, "draft-key-2"))
        assert.strictEqual(refused._tag, "ValidationError")
        assert.strictEqual(yield* keys("draft-key-2"), 0)
        assert.strictEqual((yield* create(draft("Corrected"), "draft-key-2")).replayed, false)
      })
    )

    it.effect("the kept answer and the creation commit together: a refused write leaves neither", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const process = yield* Effect.context<Layer.Layer.Success<typeof processLayer>>()
        const sql = yield* SqlClient.SqlClient
        const publish = EventIntake.idempotentPublisher.pipe(
          Effect.flatMap((publishOne) => publishOne(tourCreated("tour_refused_by_db"), "event-key-refused")),
          inProcess(process)
        )
        const create = Effect.flatMap(DraftService, (service) =>
          service.createIdempotent(draft("Refused by db"), "draft-key-refused")
        ).pipe(inProcess(process))
        yield* sql`
          CREATE FUNCTION waybill_test_refuse_keyed() RETURNS trigger LANGUAGE plpgsql
          AS $$ BEGIN IF NEW.body LIKE '%efused%' THEN RAISE EXCEPTION 'outbox refused'; END IF; RETURN NEW; END $$`
        yield* sql`
          CREATE TRIGGER waybill_test_refuse_keyed BEFORE INSERT ON events FOR EACH ROW
          EXECUTE FUNCTION waybill_test_refuse_keyed()`
        const refusedEvent = yield* Effect.exit(publish)
        const refusedDraft = yield* Effect.exit(create)
        yield* sql`DROP TRIGGER waybill_test_refuse_keyed ON events`
        yield* sql`DROP FUNCTION waybill_test_refuse_keyed()`
        assert.isTrue(Exit.isFailure(refusedEvent) && Exit.isFailure(refusedDraft))
        assert.strictEqual(yield* keys("event-key-refused"), 0)
        assert.strictEqual(yield* keys("draft-key-refused"), 0)
        assert.strictEqual(yield* drafts("Refused by db"), 0)
        // Nothing was kept, so the same keys now create.
        assert.strictEqual((yield* publish).replayed, false)
        assert.strictEqual((yield* create).replayed, false)
        assert.strictEqual(yield* events("tour_refused_by_db"), 1)
        assert.strictEqual(yield* drafts("Refused by db"), 1)
      })
    )

    it.effect("two processes racing with one key record one event; every answer names it", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const one = yield* Effect.context<Layer.Layer.Success<typeof processLayer>>()
        const two = yield* Layer.build(processLayer)
        const publishIn = (process: Process) =>
          EventIntake.idempotentPublisher.pipe(
            Effect.flatMap((publishOne) => publishOne(tourCreated("tour_raced"), "event-key-raced")),
            inProcess(process),
            Effect.either
          )
        const results = yield* Effect.all(
          Array.from({ length: 40 }, (_, i) => publishIn(i % 2 === 0 ? one : two)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(yield* events("tour_raced"), 1)
        const answered = results.flatMap((result) => (Either.isRight(result) ? [result.right] : []))
        const refused = results.flatMap((result) => (Either.isLeft(result) ? [result.left._tag] : []))
        assert.strictEqual(answered.filter((outcome) => !outcome.replayed).length, 1)
        assert.strictEqual(new Set(answered.map((outcome) => outcome.value.id)).size, 1)
        assert.isTrue(
          refused.every((tag) => tag === "IdempotencyKeyInFlight"),
          refused.join(",")
        )
        assert.isAbove(answered.length, 1)
      }).pipe(Effect.scoped)
    )

    it.effect("keyed and plain events share a write; a key repeated in one batch records once", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const process = yield* Effect.context<Layer.Layer.Success<typeof processLayer>>()
        const keyed = yield* EventIntake.idempotentPublisher.pipe(Effect.provide(process))
        const plain = yield* EventIntake.publisher.pipe(Effect.provide(process))
        const all = yield* Effect.all(
          [
            ...Array.from({ length: 10 }, (_, i) =>
              Effect.asVoid(keyed(tourCreated(`tour_mixed_k${i}`), `mixed-${i}`))
            ),
            ...Array.from({ length: 10 }, (_, i) => Effect.asVoid(plain(tourCreated(`tour_mixed_p${i}`))))
          ],
          { concurrency: "unbounded" }
        ).pipe(as(wsA))
        assert.strictEqual(all.length, 20)
        assert.strictEqual(yield* events("tour_mixed_"), 20)
        // The outbox's own write, given one key twice in a batch: the first entry only.
        const outbox = yield* EventOutboxTag
        const record = (key: string): Idempotency.IdempotencyRecord => ({
          workspaceId: wsA,
          key,
          operation: "POST /events",
          fingerprint: "f",
          status: 202,
          body: "{}",
          createdAt: NOW / 1000,
          expiresAt: NOW / 1000 + 10
        })
        const entry = (id: string, key?: string) => ({
          event: { type: "tour-created" as const, payload: tourCreated(id).payload },
          record: key === undefined ? undefined : record(key)
        })
        const written = yield* outbox.publishIdempotent!(wsA, [
          entry("tour_batch_a", "batch-key"),
          entry("tour_batch_b", "batch-key"),
          entry("tour_batch_c")
        ])
        assert.deepStrictEqual(
          written.map((event) => event !== undefined),
          [true, false, true]
        )
        assert.strictEqual(yield* events("tour_batch_"), 2)
      })
    )

    it.effect("a webhook registered with a key is stored once; its answer is replayed byte for byte", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const process = yield* Effect.context<Layer.Layer.Success<typeof processLayer>>()
        const register = (body: unknown) =>
          Effect.flatMap(WebhookService, (service) => service.registerIdempotent(body, "webhook-key-1")).pipe(
            inProcess(process)
          )
        const body = {
          url: "http://127.0.0.1:9/idem",
          events: ["tour-created"],
          auth: { type: "hmac", secret: "idempotent-secret-0001" }
        }
        const first = yield* register(body)
        const again = yield* register({ auth: body.auth, events: body.events, url: body.url })
        assert.deepStrictEqual(again, { ...first, replayed: true })
        assert.notInclude(first.body, "idempotent-secret-0001")
        assert.strictEqual(yield* count(`webhooks WHERE id = '${first.value.id}'`), 1)
        assert.strictEqual(yield* count(`webhooks WHERE document->>'url' = 'http://127.0.0.1:9/idem'`), 1)
        assert.instanceOf(yield* Effect.flip(register({ ...body, description: "x" })), Idempotency.IdempotencyKeyReused)
      })
    )

    it.effect("the sweep deletes expired answers only, in bounded steps", () =>
      Effect.gen(function* () {
        const store = yield* Idempotency.IdempotencyStore
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM idempotency_keys`
        for (let i = 0; i < 5; i++) {
          yield* store.insert({
            workspaceId: wsB,
            key: `sweep-${i}`,
            operation: "POST /events",
            fingerprint: "f",
            status: 202,
            body: "{}",
            createdAt: 100,
            expiresAt: i < 4 ? 200 : 300
          })
        }
        assert.strictEqual(yield* store.sweep(199, 10), 0)
        assert.strictEqual(yield* store.sweep(200, 3), 3)
        assert.strictEqual(yield* store.sweep(200, 3), 1)
        assert.strictEqual(yield* count("idempotency_keys"), 1)
        assert.isFalse(yield* store.insert(Option.getOrThrow(yield* store.find(wsB, "sweep-4"))))
      })
    )
  }
)
