import { assert, describe, it } from "@effect/vitest"
import type { Issue } from "@waybill/core/Issue"
import { CurrentWorkspace, type WorkspaceId } from "@waybill/core/Workspace"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as EventIntake from "../src/EventIntake.js"
import * as EventOutbox from "../src/EventOutbox.js"
import type { EventType } from "../src/EventType.js"

const { decodeEvent } = EventIntake

const tour = (properties: Record<string, unknown> = {}) => ({
  id: "tour_1",
  status: "planned",
  substatus: null,
  properties
})

const publish = (type: EventType, payload: unknown) =>
  EventIntake.publish({ type, payload }).pipe(
    Effect.provideService(CurrentWorkspace, { id: "ws_a" as WorkspaceId, apiKeyId: "key_ws_a" })
  )

const issuesOf = (input: unknown): ReadonlyArray<Issue> =>
  Either.match(decodeEvent(input), { onLeft: (issues) => issues, onRight: () => [] })

const action = (payload: Record<string, unknown>) => ({
  id: "act_1",
  payload,
  createdAt: 1_798_000_000,
  createdAtMilliseconds: 1_798_000_000_000
})

describe("EventIntake", () => {
  it("accepts a catalogue event and returns its payload", () => {
    const result = decodeEvent({ type: "tour-created", payload: { tour: tour({ prop_region: "opt_north" }) } })
    assert.deepStrictEqual(
      result,
      Either.right({ type: "tour-created", payload: { tour: tour({ prop_region: "opt_north" }) } })
    )
  })

  it("reports the type, the payload and unknown keys, each with its path", () => {
    assert.deepStrictEqual(issuesOf({}), [
      { path: "type", message: "is required" },
      { path: "payload", message: "is required" }
    ])
    assert.deepStrictEqual(issuesOf({ type: "tour-exploded", payload: {}, extra: 1 }), [
      { path: "extra", message: "is not a known field" },
      { path: "type", message: "is not a catalogue event type" }
    ])
    assert.deepStrictEqual(issuesOf([]), [{ path: "", message: "must be a JSON object" }])
    const paths = issuesOf({ type: "tour-created", payload: { tour: { id: 7 } } }).map((issue) => issue.path)
    assert.isTrue(paths.length > 0)
    assert.isTrue(paths.every((path) => path.startsWith("payload.")))
    assert.include(paths, "payload.tour.id")
  })

  it("applies the catalogue's redaction", () => {
    const result = decodeEvent({
      type: "tour-action-created",
      payload: {
        tour: tour(),
        action: action({
          type: "assign",
          preAssignCarrierId: "car_internal",
          carrierBooking: { provider: "p", carrierId: "c", carrierBookingId: "b", trackingRef: "t", secretRoute: "x" },
          providerPayload: { raw: true }
        })
      }
    })
    assert.isTrue(Either.isRight(result))
    if (Either.isRight(result)) {
      const payload = result.right.payload as { action: { payload: Record<string, unknown> } }
      assert.deepStrictEqual(payload.action.payload, {
        type: "assign",
        carrierBooking: { provider: "p", carrierId: "c", carrierBookingId: "b", trackingRef: "t" }
      })
    }
  })

  it.effect("records the event with its body fixed once", () =>
    Effect.gen(function* () {
      const event = yield* publish("tour-created", { tour: tour() })
      assert.match(event.id, /^evt_/)
      assert.deepStrictEqual(JSON.parse(event.body), {
        id: event.id,
        type: "tour-created",
        createdAt: event.createdAt,
        payload: { tour: tour() }
      })
      const error = yield* Effect.flip(publish("tour-created", { tour: {} }))
      assert.strictEqual(error._tag, "ValidationError")
      assert.isTrue(error.issues.every((issue) => issue.path.startsWith("payload.")))
    }).pipe(Effect.provide(EventOutbox.layerMemory))
  )

  it("takes an orderingKey of 1 to 255 characters, else an issue at orderingKey", () => {
    const body = { type: "tour-created", payload: { tour: tour() } }
    for (const key of ["tour_1", "x".repeat(255), "🚚".repeat(255)]) {
      assert.deepStrictEqual(
        decodeEvent({ ...body, orderingKey: key }),
        Either.right({ type: "tour-created", payload: { tour: tour() }, orderingKey: key })
      )
    }
    for (const [key, message] of [
      ["", "must be 1 to 255 characters"],
      ["x".repeat(256), "must be 1 to 255 characters"],
      [7, "must be a string"],
      [null, "must be a string"],
      [["a"], "must be a string"],
      ["a\u0000b", "contains a NUL character (\\u0000), which cannot be stored"]
    ] as const) {
      assert.deepStrictEqual(issuesOf({ ...body, orderingKey: key }), [{ path: "orderingKey", message }], String(key))
    }
    // Beside the other issues, not instead of them.
    assert.deepStrictEqual(issuesOf({ type: "tour-created", orderingKey: "" }), [
      { path: "payload", message: "is required" },
      { path: "orderingKey", message: "must be 1 to 255 characters" }
    ])
  })

  it("takes a traceparent only when asked to, and only a valid one", () => {
    const body = { type: "tour-created", payload: { tour: tour() } }
    const header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    assert.deepStrictEqual(issuesOf({ ...body, traceparent: header }), [
      { path: "traceparent", message: "is not a known field" }
    ])
    assert.deepStrictEqual(
      decodeEvent({ ...body, traceparent: header }, { traceparent: true }),
      Either.right({ type: "tour-created", payload: { tour: tour() }, traceparent: header })
    )
    assert.deepStrictEqual(
      decodeEvent(body, { traceparent: true }),
      Either.right({ type: "tour-created", payload: { tour: tour() } })
    )
    for (const bad of ["", "00-0-0-01", `00-${"0".repeat(32)}-00f067aa0ba902b7-01`, 42]) {
      assert.deepStrictEqual(
        Either.match(decodeEvent({ ...body, traceparent: bad }, { traceparent: true }), {
          onLeft: (issues) => issues.map((issue) => issue.path),
          onRight: () => []
        }),
        ["traceparent"],
        String(bad)
      )
    }
  })

  it.effect("records the orderingKey beside the body, never in it", () =>
    Effect.gen(function* () {
      const keyed = yield* EventIntake.publish({
        type: "tour-deleted",
        payload: { tourId: "t" },
        orderingKey: "t"
      }).pipe(Effect.provideService(CurrentWorkspace, { id: "ws_a" as WorkspaceId, apiKeyId: "key_ws_a" }))
      const plain = yield* publish("tour-deleted", { tourId: "u" })
      assert.deepStrictEqual([keyed.orderingKey, plain.orderingKey], ["t", null])
      assert.deepStrictEqual(Object.keys(JSON.parse(keyed.body)), ["id", "type", "createdAt", "payload"])
      const log = yield* EventOutbox.MemoryEventLog
      assert.deepStrictEqual(
        (yield* log.all).map((event) => event.orderingKey),
        ["t", null]
      )
    }).pipe(Effect.provide(EventOutbox.layerMemory))
  )

  it("takes a body of 64 levels and refuses deeper ones at the path where the limit is crossed", () => {
    // body, payload, tour, properties, then `levels` arrays under `deep`.
    const body = (levels: number) => ({
      type: "tour-created",
      payload: { tour: tour({ deep: JSON.parse(`${"[".repeat(levels)}${"]".repeat(levels)}`) }) }
    })
    assert.isTrue(Either.isRight(decodeEvent(body(60))))
    const path = ["payload", "tour", "properties", "deep", ...Array<string>(60).fill("0")].join(".")
    for (const levels of [61, 5_000, 100_000]) {
      assert.deepStrictEqual(issuesOf(body(levels)), [
        { path, message: "nests deeper than 64 levels of objects and arrays" }
      ])
    }
  })
})
