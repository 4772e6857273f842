import { assert, describe, it } from "@effect/vitest"
import * as Transactor from "@waybill/core/Transactor"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventOutbox from "@waybill/events/EventOutbox"
import type { EventType } from "@waybill/events/EventType"
import * as Payload from "@waybill/events/Payload"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import type { CreateDraft } from "../src/CreateDraft.js"
import { type ActionType, apiKeyActor, Draft } from "../src/Draft.js"
import * as DraftRepository from "../src/DraftRepository.js"
import { DraftService, layer } from "../src/DraftService.js"
import * as ProductEvaluator from "../src/ProductEvaluator.js"
import * as ReferenceData from "../src/ReferenceData.js"
import {
  decodeCreate,
  manualBody,
  masterBody,
  NOW,
  NOW_SECONDS,
  productTransport,
  referenceData,
  schedule
} from "./fixtures.js"

const wsA = Schema.decodeSync(WorkspaceId)("wsp_a")
const wsB = Schema.decodeSync(WorkspaceId)("wsp_b")

const TestLayer = layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      DraftRepository.layerMemory,
      ReferenceData.layerMemory(referenceData),
      ProductEvaluator.layerReference,
      EventOutbox.layerMemory,
      Transactor.layerMemory
    )
  )
)

// Storage that yields to other fibers on every call, as a database round trip does, so that
// concurrent actions really interleave unless the service serialises them.
const SlowRepository = Layer.sync(DraftRepository.DraftRepository, () => {
  const repository = DraftRepository.makeMemory()
  const slow =
    <Args extends ReadonlyArray<unknown>, A>(f: (...args: Args) => Effect.Effect<A>) =>
    (...args: Args) =>
      Effect.zipRight(Effect.yieldNow(), f(...args))
  return DraftRepository.DraftRepository.of({
    insert: slow(repository.insert),
    get: slow(repository.get),
    getForUpdate: slow(repository.getForUpdate),
    update: slow(repository.update),
    delete: slow(repository.delete),
    list: slow(repository.list)
  })
})

const SlowLayer = layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      SlowRepository,
      ReferenceData.layerMemory(referenceData),
      ProductEvaluator.layerReference,
      EventOutbox.layerMemory,
      Transactor.layerMemory
    )
  )
)

const testSlow = <A, E>(self: Effect.Effect<A, E, DraftService | EventOutbox.MemoryEventLog>) =>
  Effect.zipRight(TestClock.setTime(NOW), self).pipe(Effect.provide(SlowLayer))

// Each test gets fresh in-memory ports and a clock at NOW.
const test = <A, E>(
  self: Effect.Effect<A, E, DraftService | EventOutbox.MemoryEventLog | DraftRepository.DraftRepository>
) => Effect.zipRight(TestClock.setTime(NOW), self).pipe(Effect.provide(TestLayer))

const as =
  (workspaceId: WorkspaceId, apiKeyId = "key_a") =>
  <A, E, R>(self: Effect.Effect<A, E, R>) =>
    Effect.provideService(self, CurrentWorkspace, { id: workspaceId, apiKeyId })

const events = Effect.flatMap(EventOutbox.MemoryEventLog, (log) => log.all)
const eventTypes = Effect.map(events, (all) => all.map((event) => event.type))

const create = (body: Record<string, unknown>, workspaceId = wsA) =>
  Effect.flatMap(DraftService, (service) => service.create(decodeCreate(body) as CreateDraft)).pipe(as(workspaceId))

const act = (id: string, type: ActionType, workspaceId = wsA, reason?: string) =>
  Effect.flatMap(DraftService, (service) =>
    service.act(id, reason === undefined ? { type } : { type, reason }, apiKeyActor("key_a"))
  ).pipe(as(workspaceId))

describe("DraftService.create", () => {
  it.effect("stores the draft and records transport-drafts-created in the outbox", () =>
    test(
      Effect.gen(function* () {
        const draft = yield* create(masterBody())
        assert.match(draft.id, /^drf_[0-9a-z]{26}$/)
        assert.strictEqual(draft.createdAt, NOW_SECONDS)
        const service = yield* DraftService
        assert.deepStrictEqual(yield* service.get(draft.id).pipe(as(wsA)), draft)
        const recorded = yield* events
        assert.strictEqual(recorded.length, 1)
        assert.strictEqual(recorded[0]!.type, "transport-drafts-created")
        assert.strictEqual(recorded[0]!.workspaceId, wsA)
        const body = JSON.parse(recorded[0]!.body)
        assert.deepStrictEqual(Object.keys(body), ["id", "type", "createdAt", "payload"])
        assert.deepStrictEqual(body.payload, { transportDrafts: [Schema.encodeSync(Draft)(draft)] })
        assert.strictEqual(recorded[0]!.orderingKey, draft.id, "keyed by its draft")
      })
    )
  )

  it.effect("a decode draft also records decode-job-result", () =>
    test(
      Effect.gen(function* () {
        const draft = yield* create({ ...manualBody(), origin: "decode", status: "review-rfq", payload: { raw: 1 } })
        const recorded = yield* events
        assert.deepStrictEqual(
          recorded.map((event) => event.type),
          ["transport-drafts-created", "decode-job-result"]
        )
        assert.deepStrictEqual(recorded[1]!.payload, { transportDraft: draft })
      })
    )
  )

  it.effect("fails with every issue and stores and records nothing", () =>
    test(
      Effect.gen(function* () {
        const error = yield* Effect.flip(create({ ...masterBody(), status: "review-order", transport: {} }))
        assert.strictEqual(error._tag, "ValidationError")
        assert.deepStrictEqual(
          error.issues.map((issue) => issue.path),
          ["status", "transport.multiStopData.stops", "transport.tour.vehicleClass"]
        )
        assert.deepStrictEqual(yield* eventTypes, [])
        const page = yield* Effect.flatMap(DraftService, (service) => service.list({})).pipe(as(wsA))
        assert.deepStrictEqual(page.data, [])
      })
    )
  )

  it.effect("copies a template of the same workspace only", () =>
    test(
      Effect.gen(function* () {
        const template = yield* create(masterBody())
        const copy = yield* create({ origin: "hub", status: "draft", templateDraftId: template.id })
        assert.strictEqual(copy.name, template.name)
        assert.strictEqual(copy.templateDraftId, template.id)
        const foreign = yield* Effect.flip(
          create({ origin: "hub", status: "draft", templateDraftId: template.id }, wsB)
        )
        assert.deepStrictEqual(foreign.issues, [{ path: "templateDraftId", message: "no draft with this id exists" }])
      })
    )
  )
})

describe("DraftService.get and list", () => {
  it.effect("a draft of another workspace is not found", () =>
    test(
      Effect.gen(function* () {
        const draft = yield* create(manualBody())
        const service = yield* DraftService
        const error = yield* Effect.flip(service.get(draft.id).pipe(as(wsB)))
        assert.strictEqual(error._tag, "DraftNotFound")
        assert.strictEqual(error.draftId, draft.id)
        assert.strictEqual((yield* Effect.flip(service.get("drf_nope").pipe(as(wsA))))._tag, "DraftNotFound")
      })
    )
  )

  it.effect("pages newest first with cursors, filters by status, and isolates workspaces", () =>
    test(
      Effect.gen(function* () {
        const service = yield* DraftService
        const created: Array<string> = []
        for (let i = 0; i < 5; i++) {
          yield* TestClock.adjust("1 second")
          created.push((yield* create(i % 2 === 0 ? manualBody() : masterBody())).id)
        }
        yield* create(manualBody(), wsB)
        const seen: Array<string> = []
        let cursor: string | undefined
        let pages = 0
        do {
          const page: DraftRepository.DraftPage = yield* service
            .list(cursor === undefined ? { limit: 2 } : { limit: 2, cursor })
            .pipe(as(wsA))
          seen.push(...page.data.map((draft) => draft.id))
          cursor = page.nextCursor ?? undefined
          pages++
        } while (cursor !== undefined)
        assert.deepStrictEqual(seen, [...created].reverse())
        assert.strictEqual(pages, 3)

        yield* act(created[1]!, "activate-recurring")
        const active = yield* service.list({ status: "active-recurring" }).pipe(as(wsA))
        assert.deepStrictEqual(
          active.data.map((draft) => draft.id),
          [created[1]]
        )
        assert.isNull(active.nextCursor)
        const exact = yield* service.list({ limit: 5 }).pipe(as(wsA))
        assert.strictEqual(exact.data.length, 5)
        assert.isNull(exact.nextCursor)
        assert.strictEqual((yield* service.list({}).pipe(as(wsB))).data.length, 1)
      })
    )
  )

  it.effect("refuses a bad limit or cursor with every issue", () =>
    test(
      Effect.gen(function* () {
        const service = yield* DraftService
        const error = yield* Effect.flip(service.list({ limit: 0, cursor: "garbage!" }).pipe(as(wsA)))
        assert.deepStrictEqual(
          error.issues.map((issue) => issue.path),
          ["limit", "cursor"]
        )
        for (const limit of [101, 1.5, Number.NaN]) {
          assert.strictEqual((yield* Effect.flip(service.list({ limit }).pipe(as(wsA))))._tag, "ValidationError")
        }
        assert.strictEqual((yield* service.list({ limit: 100 }).pipe(as(wsA))).data.length, 0)
      })
    )
  )
})

describe("DraftService.delete", () => {
  it.effect("deletes and records transport-drafts-deleted", () =>
    test(
      Effect.gen(function* () {
        const service = yield* DraftService
        const draft = yield* create(manualBody())
        yield* service.delete(draft.id).pipe(as(wsA))
        assert.strictEqual((yield* Effect.flip(service.get(draft.id).pipe(as(wsA))))._tag, "DraftNotFound")
        const recorded = yield* events
        assert.deepStrictEqual(recorded[1]!.type, "transport-drafts-deleted")
        assert.deepStrictEqual(recorded[1]!.payload, { transportDraftIds: [draft.id] })
        assert.strictEqual(recorded[1]!.orderingKey, draft.id)
        assert.strictEqual((yield* Effect.flip(service.delete(draft.id).pipe(as(wsA))))._tag, "DraftNotFound")
      })
    )
  )

  it.effect("a deletion racing an activation never deletes a running master", () =>
    testSlow(
      Effect.gen(function* () {
        const service = yield* DraftService
        const draft = yield* create(masterBody())
        const [activated, deleted] = yield* Effect.all(
          [Effect.either(act(draft.id, "activate-recurring")), Effect.either(service.delete(draft.id).pipe(as(wsA)))],
          { concurrency: "unbounded" }
        )
        // Either the activation ran first (delete refused) or the delete did (activation not found).
        assert.isTrue(Either.isRight(activated) !== Either.isRight(deleted))
        const types = yield* eventTypes
        assert.strictEqual(
          types.includes("transport-draft-recurring-activated"),
          !types.includes("transport-drafts-deleted")
        )
      })
    )
  )

  it.effect("refuses a running master with a conflict, and deletes it once ended", () =>
    test(
      Effect.gen(function* () {
        const service = yield* DraftService
        const draft = yield* create(masterBody())
        yield* act(draft.id, "activate-recurring")
        assert.strictEqual((yield* Effect.flip(service.delete(draft.id).pipe(as(wsA))))._tag, "DraftConflict")
        yield* act(draft.id, "pause-recurring")
        assert.strictEqual((yield* Effect.flip(service.delete(draft.id).pipe(as(wsA))))._tag, "DraftConflict")
        yield* act(draft.id, "end-recurring")
        yield* service.delete(draft.id).pipe(as(wsA))
        assert.strictEqual((yield* eventTypes).filter((type) => type === "transport-drafts-deleted").length, 1)
      })
    )
  )

  it.effect("never deletes another workspace's draft", () =>
    test(
      Effect.gen(function* () {
        const service = yield* DraftService
        const draft = yield* create(manualBody())
        assert.strictEqual((yield* Effect.flip(service.delete(draft.id).pipe(as(wsB))))._tag, "DraftNotFound")
        assert.strictEqual((yield* service.get(draft.id).pipe(as(wsA))).id, draft.id)
      })
    )
  )
})

describe("DraftService.act", () => {
  it.effect("walks a master through its life, recording each action and its events", () =>
    test(
      Effect.gen(function* () {
        const draft = yield* create(masterBody())
        const activated = yield* act(draft.id, "activate-recurring", wsA, "go")
        assert.strictEqual(activated.transportDraft.status, "active-recurring")
        assert.deepStrictEqual(activated.action.actor, { type: "api-key", id: "key_a" })
        assert.deepStrictEqual(activated.action.payload, { type: "activate-recurring", reason: "go" })
        assert.match(activated.action.id, /^act_/)
        yield* act(draft.id, "pause-recurring")
        yield* act(draft.id, "resume-recurring")
        const ended = yield* act(draft.id, "end-recurring")
        assert.strictEqual(ended.transportDraft.status, "ended-recurring")
        const service = yield* DraftService
        assert.strictEqual((yield* service.get(draft.id).pipe(as(wsA))).status, "ended-recurring")
        assert.deepStrictEqual(yield* eventTypes, [
          "transport-drafts-created",
          "transport-draft-recurring-activated",
          "transport-draft-action-created",
          "transport-draft-recurring-paused",
          "transport-draft-action-created",
          "transport-draft-recurring-resumed",
          "transport-draft-action-created",
          "transport-draft-recurring-ended",
          "transport-draft-action-created"
        ])
        const last = (yield* events).at(-1)!
        assert.deepStrictEqual(last.payload, { transportDraft: ended.transportDraft, action: ended.action })
      })
    )
  )

  it.effect("refuses an invalid transition without writing or recording anything", () =>
    test(
      Effect.gen(function* () {
        const draft = yield* create(manualBody())
        const error = yield* Effect.flip(act(draft.id, "activate-recurring"))
        assert.strictEqual(error._tag, "InvalidTransition")
        const master = yield* create(masterBody())
        assert.strictEqual((yield* Effect.flip(act(master.id, "pause-recurring")))._tag, "InvalidTransition")
        assert.deepStrictEqual(yield* eventTypes, ["transport-drafts-created", "transport-drafts-created"])
      })
    )
  )

  it.effect("refuses an activation that fails cross-entity validation (unknown vehicle class)", () =>
    test(
      Effect.gen(function* () {
        const body = masterBody()
        ;(body.transport as { tour: { vehicleClass: string } }).tour.vehicleClass = "vc_gone"
        const draft = yield* create(body)
        const error = yield* Effect.flip(act(draft.id, "activate-recurring"))
        assert.strictEqual(error._tag, "ValidationError")
        if (error._tag === "ValidationError") {
          assert.deepStrictEqual(
            error.issues.map((issue) => issue.path),
            ["transport.tour.vehicleClass"]
          )
        }
        const service = yield* DraftService
        assert.strictEqual((yield* service.get(draft.id).pipe(as(wsA))).status, "draft")
      })
    )
  )

  it.effect("an action on another workspace's draft is not found", () =>
    test(
      Effect.gen(function* () {
        const draft = yield* create(masterBody())
        assert.strictEqual((yield* Effect.flip(act(draft.id, "activate-recurring", wsB)))._tag, "DraftNotFound")
      })
    )
  )

  it.effect("of two simultaneous activations one succeeds, one is an invalid transition, one set of events", () =>
    testSlow(
      Effect.gen(function* () {
        const draft = yield* create(masterBody())
        const results = yield* Effect.all(
          [Effect.either(act(draft.id, "activate-recurring")), Effect.either(act(draft.id, "activate-recurring"))],
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter(Either.isRight).length, 1)
        const failures = results.filter(Either.isLeft).map((result) => result.left._tag)
        assert.deepStrictEqual(failures, ["InvalidTransition"])
        const types = yield* eventTypes
        assert.strictEqual(types.filter((type) => type === "transport-draft-recurring-activated").length, 1)
        assert.strictEqual(types.filter((type) => type === "transport-draft-action-created").length, 1)
      })
    )
  )

  it.effect("of many concurrent actions on one master, each applied one after the other", () =>
    testSlow(
      Effect.gen(function* () {
        const draft = yield* create(masterBody())
        yield* act(draft.id, "activate-recurring")
        const types: ReadonlyArray<ActionType> = [
          "pause-recurring",
          "resume-recurring",
          "pause-recurring",
          "end-recurring"
        ]
        const results = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) => Effect.either(act(draft.id, types[i % types.length]!))),
          { concurrency: "unbounded" }
        )
        const succeeded = results.filter(Either.isRight).length
        // Every recorded action is one that succeeded, and each saw the status the previous one left.
        const recorded = (yield* events).filter((event) => event.type === "transport-draft-action-created")
        assert.strictEqual(recorded.length, succeeded + 1)
        const service = yield* DraftService
        const final = yield* service.get(draft.id).pipe(as(wsA))
        const lastAction = recorded.at(-1)!.payload as { transportDraft: Draft }
        assert.strictEqual(final.status, lastAction.transportDraft.status)
      })
    )
  )
})

describe("DraftService.execute", () => {
  const execute = (productId: string, draftId: string, workspaceId = wsA) =>
    Effect.flatMap(DraftService, (service) => service.execute(productId, { draftId })).pipe(as(workspaceId))

  it.effect("evaluates a product against a draft whose transport parses", () =>
    test(
      Effect.gen(function* () {
        const draft = yield* create({ ...manualBody(), transport: productTransport() })
        const result = yield* execute("prod_ftl", draft.id)
        assert.deepStrictEqual(result, {
          productId: "prod_ftl",
          draftId: draft.id,
          productsMode: "booking",
          result: {
            evaluator: "reference",
            product: { id: "prod_ftl", name: "FTL booking" },
            productsMode: "booking",
            shipper: { shipperId: "shp_1", shipperTeamId: "team_1", shipperUserId: "user_1" },
            shipmentCount: 1,
            stopCount: 2,
            totalWeightKg: 1100.5,
            countries: ["AUT", "DEU", "FRA"],
            vehicleClass: "vc_12t",
            selectedProductCount: 0
          }
        })
        const rfq = yield* create({ ...manualBody(), transport: { ...productTransport(), productsMode: "rfq" } })
        assert.strictEqual((yield* execute("prod_ftl", rfq.id)).productsMode, "rfq")
      })
    )
  )

  it.effect("answers 412 with the contract message when the transport does not parse", () =>
    test(
      Effect.gen(function* () {
        const transport = productTransport()
        delete transport.shipperId
        ;(transport.order as { customer: { address: { countryCode: string } } }).customer.address.countryCode = "DE"
        const draft = yield* create({ ...manualBody(), transport })
        const error = yield* Effect.flip(execute("prod_ftl", draft.id))
        assert.strictEqual(error._tag, "PreconditionFailed")
        if (error._tag === "PreconditionFailed") {
          assert.strictEqual(
            error.message,
            `TransportForProductsSchema parse failed: ${JSON.stringify([
              { path: ["shipperId"], message: "is missing" },
              {
                path: ["order", "customer", "address", "countryCode"],
                message: 'must be an ISO 3166-1 alpha-3 country code: "DE" is alpha-2, use "DEU"'
              }
            ])}`
          )
          assert.deepStrictEqual(
            error.issues.map((issue) => issue.path),
            ["transport.shipperId", "transport.order.customer.address.countryCode"]
          )
        }
        const empty = yield* create(manualBody())
        assert.strictEqual((yield* Effect.flip(execute("prod_ftl", empty.id)))._tag, "PreconditionFailed")
      })
    )
  )

  it.effect("an unknown product or draft, or another workspace's draft, is not found", () =>
    test(
      Effect.gen(function* () {
        const draft = yield* create({ ...manualBody(), transport: productTransport() })
        assert.strictEqual((yield* Effect.flip(execute("prod_x", draft.id)))._tag, "ProductNotFound")
        assert.strictEqual((yield* Effect.flip(execute("prod_ftl", "drf_x")))._tag, "DraftNotFound")
        assert.strictEqual((yield* Effect.flip(execute("prod_ftl", draft.id, wsB)))._tag, "DraftNotFound")
      })
    )
  )
})

describe("DraftService.endBySystem", () => {
  it.effect("ends a master once endsAt has passed, as the system, once", () =>
    test(
      Effect.gen(function* () {
        const service = yield* DraftService
        const draft = yield* create(masterBody())
        yield* act(draft.id, "activate-recurring")
        const early = yield* Effect.flip(service.endBySystem(wsA, draft.id))
        assert.strictEqual(early._tag, "InvalidTransition")
        yield* TestClock.setTime(schedule.endsAt * 1000)
        const ended = yield* service.endBySystem(wsA, draft.id)
        assert.isTrue(Option.isSome(ended))
        if (Option.isSome(ended)) {
          assert.strictEqual(ended.value.transportDraft.status, "ended-recurring")
          assert.deepStrictEqual(ended.value.action.actor, { type: "system", id: "system" })
          assert.strictEqual(ended.value.action.payload.type, "end-recurring")
        }
        assert.isTrue(Option.isNone(yield* service.endBySystem(wsA, draft.id)))
        const types = yield* eventTypes
        assert.deepStrictEqual(types.slice(-2), ["transport-draft-recurring-ended", "transport-draft-action-created"])
        assert.strictEqual(types.filter((type) => type === "transport-draft-recurring-ended").length, 1)
        assert.strictEqual((yield* Effect.flip(service.endBySystem(wsB, draft.id)))._tag, "DraftNotFound")
      })
    )
  )
})

describe("DraftService: the events it records", () => {
  it.effect("match the event catalogue of @waybill/events, as delivered", () =>
    test(
      Effect.gen(function* () {
        const service = yield* DraftService
        yield* create({
          ...manualBody(),
          origin: "decode",
          status: "review-order",
          inboxId: "inb_1",
          payload: { a: 1 }
        })
        const master = yield* create(masterBody())
        yield* act(master.id, "activate-recurring", wsA, "start")
        yield* act(master.id, "pause-recurring")
        yield* act(master.id, "resume-recurring")
        yield* act(master.id, "end-recurring")
        yield* service.delete(master.id).pipe(as(wsA))
        const recorded = yield* events
        assert.strictEqual(recorded.length, 12)
        for (const event of recorded) {
          const delivered = JSON.parse(event.body) as { type: EventType; payload: unknown }
          const decoded = Payload.decodePayload(delivered.type, delivered.payload)
          assert.isTrue(Either.isRight(decoded), `${delivered.type}: ${JSON.stringify(decoded)}`)
        }
      })
    )
  )
})
