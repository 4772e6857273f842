import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import type * as Entity from "../src/Entity.js"
import type * as EntityAction from "../src/EntityAction.js"
import type * as EventType from "../src/EventType.js"
import * as Payload from "../src/Payload.js"
import * as Producer from "../src/Producer.js"
import type * as Task from "../src/Task.js"
import { fullPayload, sampleOf, specTable } from "./fixtures.js"

const tour = sampleOf("Tour") as Entity.Tour

const tourAction = (
  payload: Record<string, unknown>,
  extra: Record<string, unknown> = {}
): EntityAction.TourAction => ({
  id: "act_1",
  payload: { type: "advance", ...payload },
  createdAt: 1_798_000_000,
  createdAtMilliseconds: 1_798_000_000_000,
  ...extra
})

const valid = <T extends EventType.EventType>(event: Producer.Event<T>) => {
  const result = Payload.decodePayload(event.type, event.payload)
  assert.deepStrictEqual(Either.isLeft(result) ? result.left : [], [], event.type)
}

// Every key anywhere in a JSON value.
const keysDeep = (value: unknown): Array<string> =>
  Array.isArray(value)
    ? value.flatMap(keysDeep)
    : typeof value === "object" && value !== null
      ? Object.entries(value).flatMap(([key, inner]) => [key, ...keysDeep(inner)])
      : []

const booking = {
  provider: "acme-carrier-api",
  carrierId: "car_1",
  carrierBookingId: "bk_1",
  trackingRef: "TR-1",
  apiToken: "sk_live_secret",
  providerPayload: { raw: "<xml/>" },
  internalState: { retries: 3 }
}

describe("tour-action-created", () => {
  it("reduces a carrier-booking record to provider, carrierId, carrierBookingId, trackingRef", () => {
    const event = Producer.tourActionCreated({ tour, action: tourAction({ carrierBooking: booking }) })
    assert.deepStrictEqual(event.payload.action.payload.carrierBooking, {
      provider: "acme-carrier-api",
      carrierId: "car_1",
      carrierBookingId: "bk_1",
      trackingRef: "TR-1"
    })
    valid(event)
  })

  it("reduces nested carrier-booking records and strips raw provider payloads wherever they sit", () => {
    const action = tourAction(
      {
        providerPayload: { raw: true },
        assignment: { carrierBooking: { ...booking, trackingRef: undefined }, note: "kept" },
        legs: [{ carrierBooking: [booking, "junk"] }, { carrierBooking: null }, { carrierBooking: "bk_only" }]
      },
      { providerPayload: "top-level raw" }
    )
    const redacted = Producer.redactTourAction(action)
    assert.deepStrictEqual(redacted.payload, {
      type: "advance",
      assignment: {
        carrierBooking: {
          provider: "acme-carrier-api",
          carrierId: "car_1",
          carrierBookingId: "bk_1",
          trackingRef: undefined
        },
        note: "kept"
      },
      legs: [
        {
          carrierBooking: [
            { provider: "acme-carrier-api", carrierId: "car_1", carrierBookingId: "bk_1", trackingRef: "TR-1" }
          ]
        },
        { carrierBooking: null },
        {}
      ]
    })
    assert.notInclude(keysDeep(redacted), "providerPayload")
    assert.notInclude(JSON.stringify(redacted), "sk_live_secret")
  })

  it("invents nothing: a booking missing fields stays without them", () => {
    const redacted = Producer.redactTourAction(tourAction({ carrierBooking: { carrierId: "car_1", secret: "x" } }))
    assert.deepStrictEqual(redacted.payload.carrierBooking, { carrierId: "car_1" })
  })

  it("omits the pre-assign carrier reference from assign actions only", () => {
    for (const verb of ["assign", "assign-carrier", "assign_driver"]) {
      const redacted = Producer.redactTourAction(
        tourAction({ type: verb, preAssignCarrierId: "car_0", carrierId: "c" })
      )
      assert.deepStrictEqual(redacted.payload, { type: verb, carrierId: "c" }, verb)
    }
    for (const verb of ["advance", "unassign", "reassign", "unassign-carrier"]) {
      const redacted = Producer.redactTourAction(tourAction({ type: verb, preAssignCarrierId: "car_0" }))
      assert.strictEqual(redacted.payload.preAssignCarrierId, "car_0", verb)
    }
  })

  it("carries oldStatus/newStatus only when the commit relayed its snapshot, on its first action", () => {
    const actions = [tourAction({ type: "advance" }), tourAction({ type: "edit" }), tourAction({ type: "proof" })]
    const withSnapshot = Producer.tourCommitEvents({
      tour,
      actions,
      snapshot: { oldStatus: "planned", newStatus: "started" }
    })
    assert.deepStrictEqual(
      withSnapshot.map((event) => [event.payload.oldStatus, event.payload.newStatus]),
      [
        ["planned", "started"],
        [undefined, undefined],
        [undefined, undefined]
      ]
    )
    assert.isFalse("oldStatus" in withSnapshot[1]!.payload)
    withSnapshot.forEach(valid)
    const without = Producer.tourCommitEvents({ tour, actions })
    assert.isTrue(without.every((event) => !("oldStatus" in event.payload) && !("newStatus" in event.payload)))
    assert.deepStrictEqual(
      without.map((event) => event.payload.action.payload.type),
      ["advance", "edit", "proof"]
    )
  })

  it("property: redaction leaves no provider payload, only the four booking fields, and is idempotent", () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(
          fc.oneof(fc.constantFrom("carrierBooking", "providerPayload", "provider", "carrierId", "x"), fc.string()),
          tie("value"),
          { maxKeys: 4 }
        )
      )
    })).value
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), json, { maxKeys: 4 }),
        fc.constantFrom("assign", "advance"),
        (extra, verb) => {
          const action = tourAction({ ...extra, type: verb, preAssignCarrierId: "car_0" })
          const before = JSON.stringify(action)
          const redacted = Producer.redactTourAction(action)
          assert.strictEqual(JSON.stringify(action), before, "input mutated")
          assert.notInclude(keysDeep(redacted), "providerPayload")
          const visit = (value: unknown): void => {
            if (Array.isArray(value)) {
              for (const item of value) visit(item)
              return
            }
            if (typeof value !== "object" || value === null) return
            for (const [key, inner] of Object.entries(value)) {
              if (key === "carrierBooking") {
                const bookings = Array.isArray(inner) ? inner : [inner]
                for (const b of bookings) {
                  if (b === null) continue
                  assert.isTrue(typeof b === "object", "booking is a record")
                  for (const field of Object.keys(b)) assert.include(Producer.carrierBookingFields, field)
                }
              } else visit(inner)
            }
          }
          visit(redacted)
          assert.strictEqual("preAssignCarrierId" in redacted.payload, verb !== "assign")
          assert.deepStrictEqual(Producer.redactTourAction(redacted), redacted)
        }
      ),
      { numRuns: 200 }
    )
  })
})

describe("callout-action-created", () => {
  const stats = (n: number): Producer.BiddingStats => ({
    currentBid: 1000 - n,
    bidCount: n,
    isWinning: n === 2,
    suggestedBid: 900
  })
  const cluster = [1, 2, 3, 4].map((n) => ({ callout: { id: `co_${n}`, carrierId: `car_${n}` }, stats: stats(n) }))
  const action: Producer.CalloutActionInput = {
    id: "act_9",
    payload: { type: "bid", amount: 950, dispatchContext: { cancelReason: "system: carrier blocked" } },
    createdAt: 1_798_000_000,
    createdAtMilliseconds: 1_798_000_000_456
  }

  it("delivers only the modified callouts, each enriched with all four stats", () => {
    const event = Producer.calloutActionCreated({
      callouts: cluster,
      modifiedCalloutIds: ["co_3", "co_2", "co_unknown"],
      secretAuction: false,
      action,
      tour: { ...tour }
    })
    assert.deepStrictEqual(event.payload.callouts, [
      { id: "co_2", carrierId: "car_2", currentBid: 998, bidCount: 2, isWinning: true, suggestedBid: 900 },
      { id: "co_3", carrierId: "car_3", currentBid: 997, bidCount: 3, isWinning: false, suggestedBid: 900 }
    ])
    valid(event)
  })

  it("reveals only suggestedBid in a secret auction, even over stale stored stats", () => {
    const stale = [{ callout: { id: "co_1", currentBid: 5, bidCount: 9, isWinning: true }, stats: stats(1) }]
    const event = Producer.calloutActionCreated({
      callouts: stale,
      modifiedCalloutIds: ["co_1"],
      secretAuction: true,
      action,
      tour
    })
    assert.deepStrictEqual(event.payload.callouts, [{ id: "co_1", suggestedBid: 900 }])
    valid(event)
  })

  it("strips internal dispatch context, sets createdAt to epoch milliseconds, reduces the tour", () => {
    const event = Producer.calloutActionCreated({
      callouts: cluster,
      modifiedCalloutIds: ["co_1"],
      secretAuction: false,
      action,
      tour
    })
    assert.deepStrictEqual(event.payload.action.payload, { type: "bid", amount: 950 })
    assert.strictEqual(event.payload.action.createdAt, 1_798_000_000_456)
    assert.strictEqual(event.payload.action.createdAtMilliseconds, 1_798_000_000_456)
    assert.deepStrictEqual(event.payload.tour, { id: "tour_1", properties: tour.properties! })
  })

  it("has no tour for a system cancellation", () => {
    const event = Producer.calloutActionCreated({
      callouts: cluster,
      modifiedCalloutIds: ["co_1", "co_2", "co_3", "co_4"],
      secretAuction: false,
      action: { ...action, payload: { type: "cancel", dispatchContext: { reason: "system-timeout" } } },
      tour: undefined
    })
    assert.isFalse("tour" in event.payload)
    assert.deepStrictEqual(event.payload.action.payload, { type: "cancel" })
    assert.strictEqual(event.payload.callouts.length, 4)
    valid(event)
  })

  it("property: callouts are exactly the modified ones, in cluster order, stats by auction kind", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 20 }), { maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 25 }), { maxLength: 8 }),
        fc.boolean(),
        fc.boolean(),
        (ids, modified, secretAuction, againstTour) => {
          const callouts = ids.map((n) => ({ callout: { id: `co_${n}` }, stats: stats(n) }))
          const event = Producer.calloutActionCreated({
            callouts,
            modifiedCalloutIds: modified.map((n) => `co_${n}`),
            secretAuction,
            action,
            tour: againstTour ? tour : undefined
          })
          assert.deepStrictEqual(
            event.payload.callouts.map((callout) => callout.id),
            ids.filter((n) => modified.includes(n)).map((n) => `co_${n}`)
          )
          for (const callout of event.payload.callouts) {
            assert.deepStrictEqual(
              Object.keys(callout).sort(),
              secretAuction ? ["id", "suggestedBid"] : ["bidCount", "currentBid", "id", "isWinning", "suggestedBid"]
            )
          }
          assert.strictEqual("tour" in event.payload, againstTour)
          valid(event)
        }
      )
    )
  })
})

describe("redact (POST /events)", () => {
  it("strips a provider payload nested inside a kept carrier-booking field", () => {
    // Found by the property test below (seed -276099552).
    const payload = {
      tour,
      action: tourAction({ type: "advance", carrierBooking: { carrierId: { providerPayload: { raw: 1 } }, extra: 1 } })
    }
    const redacted = Producer.redact("tour-action-created", payload)
    assert.deepStrictEqual(redacted.action.payload.carrierBooking, { carrierId: {} })
  })

  it("applies the tour-action-created rules", () => {
    const payload = {
      tour,
      action: tourAction({ type: "assign", carrierBooking: booking, providerPayload: {}, preAssignCarrierId: "c0" }),
      oldStatus: "planned",
      newStatus: "assigned"
    }
    const redacted = Producer.redact("tour-action-created", payload)
    assert.deepStrictEqual(redacted, {
      ...payload,
      action: {
        ...payload.action,
        payload: {
          type: "assign",
          carrierBooking: {
            provider: "acme-carrier-api",
            carrierId: "car_1",
            carrierBookingId: "bk_1",
            trackingRef: "TR-1"
          }
        }
      }
    })
    assert.strictEqual(payload.action.payload.preAssignCarrierId, "c0", "input untouched")
  })

  it("applies the callout-action-created rules; custom property values of any type pass", () => {
    const payload = {
      callouts: [{ id: "co_1", suggestedBid: 1, carrierNote: "kept" }],
      action: {
        ...(sampleOf("CalloutAction") as EntityAction.CalloutAction),
        payload: { type: "cancel", dispatchContext: 1 }
      },
      tour: { ...tour, properties: { a: [1, { b: null }], c: true } }
    }
    const redacted = Producer.redact("callout-action-created", payload)
    assert.deepStrictEqual(redacted.tour, { id: tour.id, properties: { a: [1, { b: null }], c: true } })
    assert.deepStrictEqual(redacted.action.payload, { type: "cancel" })
    assert.deepStrictEqual(redacted.callouts, payload.callouts)
    const noTour = Producer.redact("callout-action-created", { callouts: [], action: payload.action })
    assert.isFalse("tour" in noTour)
  })

  it("leaves every other payload as it is", () => {
    for (const [type, keys] of specTable) {
      if (["tour-action-created", "tour-rebuilt", "callout-action-created"].includes(type)) continue
      const payload = fullPayload(keys)
      assert.deepStrictEqual(Producer.redact(type as EventType.EventType, payload as never), payload, type)
    }
  })

  it("keeps a __proto__ key as data", () => {
    const action = JSON.parse(
      '{"id":"a","payload":{"type":"advance","__proto__":{"polluted":true}},"createdAt":1,"createdAtMilliseconds":1}'
    ) as EntityAction.TourAction
    const redacted = Producer.redactTourAction(action)
    assert.isTrue(Object.hasOwn(redacted.payload, "__proto__"))
    assert.isUndefined((redacted.payload as Record<string, unknown>).polluted)
  })
})

describe("task events", () => {
  const task = (status: Task.TaskStatus, extra: Partial<Task.Task> = {}): Task.Task => ({
    id: "task_1",
    kind: "form",
    status,
    assignee: "usr_1",
    ...extra
  })
  const ref = { orn: "orn:tour:tour_1", type: "tour", id: "tour_1", name: "embedded entity field" }
  const types = (previous: Task.Task | undefined, next: Task.Task) =>
    Either.getOrThrow(Producer.taskEvents({ previous, next, referencedEntity: ref })).map((event) => event.type)

  it("raises task-created when a task comes to exist, a closing event when it closes", () => {
    assert.deepStrictEqual(types(undefined, task("open")), ["task-created"])
    assert.deepStrictEqual(types(task("open"), task("completed")), ["task-completed"])
    assert.deepStrictEqual(types(task("open"), task("skipped")), ["task-skipped"])
    assert.deepStrictEqual(types(task("open"), task("cancelled")), ["task-cancelled"])
    assert.deepStrictEqual(types(undefined, task("cancelled")), ["task-created", "task-cancelled"])
  })

  it("raises nothing for reassignments or edits, and refuses to move a closed task", () => {
    assert.deepStrictEqual(types(task("open"), task("open", { assignee: "usr_2" })), [])
    assert.deepStrictEqual(types(task("completed"), task("completed", { assignee: "usr_2" })), [])
    for (const [from, to] of [
      ["completed", "cancelled"],
      ["skipped", "completed"],
      ["cancelled", "open"]
    ] as const) {
      const refused = Producer.taskEvents({ previous: task(from), next: task(to), referencedEntity: ref })
      assert.strictEqual(Either.isLeft(refused) ? refused.left._tag : "", "TaskTransitionError", `${from} -> ${to}`)
    }
  })

  it("task-completed carries the form output; references never embed the entity", () => {
    const [completed] = Either.getOrThrow(
      Producer.taskEvents({
        previous: task("open"),
        next: task("completed", { outcome: { formOutput: { el_1: "yes" } } }),
        referencedEntity: ref
      })
    )
    assert.deepStrictEqual((completed!.payload.task as Task.CompletedTask).outcome.formOutput, { el_1: "yes" })
    assert.deepStrictEqual(completed!.payload.referencedEntity, { orn: ref.orn, type: ref.type, id: ref.id })
    valid(completed!)
    const [noForm] = Either.getOrThrow(
      Producer.taskEvents({ previous: task("open"), next: task("completed"), referencedEntity: ref })
    )
    assert.deepStrictEqual((noForm!.payload.task as Task.CompletedTask).outcome, { formOutput: {} })
    valid(noForm!)
  })

  it("property: over any status history, task-created once and at most one closing event", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<Task.TaskStatus>("open", "completed", "skipped", "cancelled")),
        (history) => {
          let previous: Task.Task | undefined
          const raised: Array<string> = []
          for (const status of history) {
            const next = task(status)
            // A refused change is not stored: the task keeps its previous state.
            Either.match(Producer.taskEvents({ previous, next, referencedEntity: ref }), {
              onLeft: () => undefined,
              onRight: (events) => {
                events.forEach(valid)
                raised.push(...events.map((event) => event.type))
                previous = next
              }
            })
          }
          assert.strictEqual(raised.filter((type) => type === "task-created").length, history.length > 0 ? 1 : 0)
          const closing = raised.filter((type) => type !== "task-created")
          const firstClosed = history.find((status) => status !== "open")
          assert.deepStrictEqual(closing, firstClosed === undefined ? [] : [`task-${firstClosed}`])
        }
      )
    )
  })

  it("sets templateKey only when the template has one", () => {
    assert.deepStrictEqual(Producer.applyTemplate(task("open"), { id: "tpl_1", key: "pod" }), {
      ...task("open"),
      templateId: "tpl_1",
      templateKey: "pod"
    })
    for (const key of [undefined, null, ""]) {
      const applied = Producer.applyTemplate(task("open", { templateKey: "stale" }), { id: "tpl_2", key })
      assert.strictEqual(applied.templateId, "tpl_2")
      assert.isFalse("templateKey" in applied, String(key))
    }
  })
})

describe("leg events", () => {
  const load = (extra: Partial<Entity.LegLoad> = {}): Entity.LegLoad => ({ id: "load_1", status: "loaded", ...extra })
  const leg = (loads: ReadonlyArray<Entity.LegLoad>): Entity.Leg => ({ id: "leg_1", status: "in-transit", loads })
  const legAction = sampleOf("LegAction") as EntityAction.LegAction

  it("delivers every transition as leg-action-created with the full leg, and leg-deleted whole", () => {
    const event = Producer.legActionCreated(leg([load()]), legAction)
    assert.strictEqual(event.type, "leg-action-created")
    assert.deepStrictEqual(event.payload.leg, leg([load()]))
    valid(event)
    assert.deepStrictEqual(Producer.legDeleted(leg([])).payload, { leg: leg([]) })
    assert.deepStrictEqual(Producer.tourDeleted(tour).payload, { tourId: tour.id })
    assert.deepStrictEqual(Producer.shipmentDeleted({ id: "shp_1" }).payload, { shipmentId: "shp_1" })
  })

  it("returns, writes off and disposes loads by the rules", () => {
    const returned = Either.getOrThrow(Producer.returnLoad(load(), { returnShipmentId: "shp_2" }))
    assert.deepStrictEqual(returned, { id: "load_1", status: "Returned", returnShipmentId: "shp_2" })
    const lost = Either.getOrThrow(Producer.writeOffLoad(load(), { reason: "Lost", writtenOffBy: "usr_1", note: "n" }))
    assert.deepStrictEqual(lost.writeOff, { reason: "Lost", writtenOffBy: "usr_1", note: "n" })
    const damaged = Either.getOrThrow(Producer.writeOffLoad(load(), { reason: "Damaged", writtenOffBy: "usr_1" }))
    const disposed = Either.getOrThrow(
      Producer.disposeLoad(damaged, { disposedAt: 1_798_000_000, disposedBy: "usr_3" })
    )
    assert.deepStrictEqual(disposed.writeOff, {
      reason: "Damaged",
      writtenOffBy: "usr_1",
      disposedAt: 1_798_000_000,
      disposedBy: "usr_3"
    })
    valid(Producer.legActionCreated(leg([returned, lost, damaged, disposed]), legAction))
  })

  it("refuses to dispose a Lost load, an open load, or a disposed one, and to end an ended load", () => {
    const lost = Either.getOrThrow(Producer.writeOffLoad(load(), { reason: "Lost", writtenOffBy: "usr_1" }))
    const disposal = { disposedAt: 1, disposedBy: "usr_1" }
    const refused = Producer.disposeLoad(lost, disposal)
    assert.isTrue(Either.isLeft(refused))
    assert.strictEqual(Either.isLeft(refused) ? refused.left._tag : "", "LoadTransitionError")
    assert.isTrue(Either.isLeft(Producer.disposeLoad(load(), disposal)))
    const damaged = Either.getOrThrow(Producer.writeOffLoad(load(), { reason: "Damaged", writtenOffBy: "usr_1" }))
    const disposed = Either.getOrThrow(Producer.disposeLoad(damaged, disposal))
    assert.isTrue(Either.isLeft(Producer.disposeLoad(disposed, disposal)))
    assert.isTrue(Either.isLeft(Producer.returnLoad(lost)))
    assert.isTrue(
      Either.isLeft(
        Producer.writeOffLoad(Either.getOrThrow(Producer.returnLoad(load())), { reason: "Lost", writtenOffBy: "u" })
      )
    )
  })
})
