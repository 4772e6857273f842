import { assert, describe, it } from "@effect/vitest"
import * as Issue from "@waybill/core/Issue"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import {
  ActionRequest,
  type ActionType,
  type Actor,
  actionTypes,
  type Draft,
  type DraftStatus,
  statuses
} from "../src/Draft.js"
import { lookup } from "../src/ReferenceData.js"
import { activationIssues, moves, type TransitionContext, transition } from "../src/Transition.js"
import { draftOf, NOW, NOW_SECONDS, schedule, shapes, vehicleClasses } from "./fixtures.js"

const apiKey: Actor = { type: "api-key", id: "key_1" }
const system: Actor = { type: "system", id: "system" }

const context = (actor: Actor = apiKey, overrides: Partial<TransitionContext> = {}): TransitionContext => ({
  actionId: "act_0000000000aaaaaaaaaaaaaaaa",
  actor,
  transportShape: lookup(shapes),
  vehicleClass: lookup(vehicleClasses),
  ...overrides
})

// The table of contract §2 for recurring masters: [from, action] → to; every other cell refuses.
const allowed: ReadonlyArray<readonly [DraftStatus, ActionType, DraftStatus]> = [
  ["draft", "activate-recurring", "active-recurring"],
  ["active-recurring", "pause-recurring", "paused-recurring"],
  ["paused-recurring", "resume-recurring", "active-recurring"],
  ["active-recurring", "end-recurring", "ended-recurring"],
  ["paused-recurring", "end-recurring", "ended-recurring"]
]

const expected = (from: DraftStatus, type: ActionType): DraftStatus | undefined =>
  allowed.find(([f, t]) => f === from && t === type)?.[2]

describe("transition: every cell of the table", () => {
  for (const from of statuses) {
    for (const type of actionTypes) {
      const to = expected(from, type)
      it(`master ${from} + ${type} → ${to ?? "409 invalid_transition"}`, () => {
        const draft = draftOf({ status: from })
        const result = transition(draft, { type }, NOW, context())
        if (to === undefined) {
          assert.isTrue(Either.isLeft(result))
          if (Either.isLeft(result)) {
            assert.strictEqual(result.left._tag, "InvalidTransition")
            if (result.left._tag === "InvalidTransition") {
              assert.strictEqual(result.left.status, from)
              assert.strictEqual(result.left.action, type)
              assert.strictEqual(result.left.draftId, draft.id)
            }
          }
        } else {
          assert.isTrue(Either.isRight(result), JSON.stringify(Either.isLeft(result) ? result.left : null))
          if (Either.isRight(result)) assert.strictEqual(result.right.draft.status, to)
        }
      })
      it(`non-master ${from} + ${type} → 409 invalid_transition`, () => {
        const result = transition(draftOf({ status: from, recurringSchedule: null }), { type }, NOW, context())
        assert.isTrue(Either.isLeft(result))
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left._tag, "InvalidTransition")
          assert.include(result.left.message, "not a recurring master")
        }
      })
    }
  }

  it("the table of the module is the contract's", () => {
    for (const type of actionTypes) {
      for (const from of statuses) {
        assert.strictEqual(moves[type].from.includes(from) ? moves[type].to : undefined, expected(from, type))
      }
    }
  })
})

describe("transition: the system actor", () => {
  const ended = draftOf({
    status: "active-recurring",
    recurringSchedule: { ...draftOf().recurringSchedule!, startsAt: NOW_SECONDS - 100, endsAt: NOW_SECONDS - 1 }
  })

  it("ends an active or paused master once endsAt has passed", () => {
    for (const status of ["active-recurring", "paused-recurring"] as const) {
      const result = transition({ ...ended, status }, { type: "end-recurring" }, NOW, context(system))
      assert.isTrue(Either.isRight(result))
      if (Either.isRight(result)) {
        assert.strictEqual(result.right.draft.status, "ended-recurring")
        assert.deepStrictEqual(result.right.action.actor, system)
      }
    }
  })

  it("ends a master exactly at endsAt", () => {
    const draft = { ...ended, recurringSchedule: { ...ended.recurringSchedule!, endsAt: NOW_SECONDS } }
    assert.isTrue(Either.isRight(transition(draft, { type: "end-recurring" }, NOW, context(system))))
  })

  it("refuses before endsAt, without endsAt, and every other action", () => {
    const running = draftOf({ status: "active-recurring" })
    const { endsAt: _, ...openSchedule } = draftOf().recurringSchedule!
    const open = draftOf({ status: "active-recurring", recurringSchedule: openSchedule })
    for (const [draft, type] of [
      [running, "end-recurring"],
      [open, "end-recurring"],
      [ended, "pause-recurring"],
      [{ ...ended, status: "paused-recurring" }, "resume-recurring"],
      [{ ...ended, status: "draft" }, "activate-recurring"]
    ] as const) {
      const result = transition(draft as Draft, { type }, NOW, context(system))
      assert.isTrue(Either.isLeft(result) && result.left._tag === "InvalidTransition", `${draft.status} ${type}`)
    }
  })
})

describe("transition: the action record and events", () => {
  it("records who, what and when, and raises the lifecycle event then transport-draft-action-created", () => {
    const now = NOW + 1234
    const result = Either.getOrThrow(
      transition(
        draftOf({ status: "active-recurring" }),
        { type: "pause-recurring", reason: "holidays" },
        now,
        context()
      )
    )
    assert.deepStrictEqual(result.action, {
      id: "act_0000000000aaaaaaaaaaaaaaaa",
      draftId: "drf_0000000000aaaaaaaaaaaaaaaa",
      payload: { type: "pause-recurring", reason: "holidays" },
      actor: apiKey,
      createdAt: NOW_SECONDS + 1,
      createdAtMilliseconds: now
    })
    assert.strictEqual(result.draft.updatedAt, NOW_SECONDS + 1)
    assert.deepStrictEqual(result.events, [
      {
        type: "transport-draft-recurring-paused",
        payload: { transportDraft: result.draft },
        orderingKey: result.draft.id
      },
      {
        type: "transport-draft-action-created",
        payload: { transportDraft: result.draft, action: result.action },
        orderingKey: result.draft.id
      }
    ])
  })

  it("names each lifecycle event", () => {
    const cases = [
      ["draft", "activate-recurring", "transport-draft-recurring-activated"],
      ["active-recurring", "pause-recurring", "transport-draft-recurring-paused"],
      ["paused-recurring", "resume-recurring", "transport-draft-recurring-resumed"],
      ["paused-recurring", "end-recurring", "transport-draft-recurring-ended"]
    ] as const
    for (const [status, type, event] of cases) {
      const result = Either.getOrThrow(transition(draftOf({ status }), { type }, NOW, context()))
      assert.deepStrictEqual(
        result.events.map((e) => e.type),
        [event, "transport-draft-action-created"]
      )
      assert.isUndefined(result.action.payload.reason)
    }
  })
})

describe("activation: cross-entity validation", () => {
  const refused = (draft: Draft, ctx: TransitionContext = context()) => {
    const result = transition(draft, { type: "activate-recurring" }, NOW, ctx)
    if (Either.isRight(result) || result.left._tag !== "ValidationError") {
      assert.fail(`expected a ValidationError, got ${JSON.stringify(result)}`)
    }
    return result.left.issues.map((issue) => issue.path)
  }

  it("accepts a valid master, even when startsAt has passed since creation", () => {
    const draft = draftOf({
      recurringSchedule: { ...draftOf().recurringSchedule!, startsAt: NOW_SECONDS - 30 * 86_400 }
    })
    assert.isTrue(Either.isRight(transition(draft, { type: "activate-recurring" }, NOW, context())))
  })

  it("refuses a transport shape that no longer exists", () => {
    assert.deepStrictEqual(refused(draftOf({ transportShapeId: "shape_gone" })), ["transportShapeId"])
  })

  it("refuses a shape that is no longer recurring-enabled or no longer outputs tours", () => {
    const changed = shapes.map((shape) =>
      shape.id === "shape_line" ? { ...shape, recurring: { enabled: false }, outputs: ["order"] } : shape
    )
    assert.deepStrictEqual(refused(draftOf(), context(apiKey, { transportShape: lookup(changed) })), [
      "transportShapeId",
      "transportShapeId"
    ])
  })

  it("refuses an unknown vehicle class", () => {
    const transport = { ...draftOf().transport!, tour: { vehicleClass: "vc_99t" } }
    assert.deepStrictEqual(refused(draftOf({ transport })), ["transport.tour.vehicleClass"])
  })

  it("refuses an endsAt that has passed", () => {
    const draft = draftOf({
      recurringSchedule: { ...draftOf().recurringSchedule!, startsAt: NOW_SECONDS - 100, endsAt: NOW_SECONDS - 1 }
    })
    assert.deepStrictEqual(refused(draft), ["recurringSchedule.endsAt"])
  })

  it("refuses a window without any trigger", () => {
    // 2027-01-02 is a Saturday: a window over the weekend holds no weekday 06:00 trigger.
    const saturday = 1_798_848_000
    const draft = draftOf({
      recurringSchedule: {
        ...schedule,
        vehicleClassAdjustmentStrategy: "preserve",
        startsAt: saturday,
        endsAt: saturday + 2 * 86_400 - 7200
      }
    })
    assert.deepStrictEqual(refused(draft), ["recurringSchedule"])
  })

  it("refuses a field the transport shape requires", () => {
    assert.deepStrictEqual(refused(draftOf({ transportShapeId: "shape_strict" })), ["transport.order.reference"])
    const withReference = draftOf({
      transportShapeId: "shape_strict",
      transport: { ...draftOf().transport!, order: { reference: "PO-7" } }
    })
    assert.isTrue(Either.isRight(transition(withReference, { type: "activate-recurring" }, NOW, context())))
  })

  it("runs every create rule again and reports all problems", () => {
    const draft = draftOf({
      name: "{{ customer }}",
      transport: { multiStopData: { stops: [{ address: {}, timeWindow: { from: "08:00", to: "07:00" } }] } }
    })
    assert.deepStrictEqual(refused(draft), [
      "name",
      "transport.multiStopData.stops",
      "transport.multiStopData.stops.0.address",
      "transport.multiStopData.stops.0.timeWindow",
      "transport.tour.vehicleClass"
    ])
  })

  it("is what activationIssues returns", () => {
    assert.deepStrictEqual(activationIssues(draftOf(), NOW, context()), [])
  })
})

describe("transition: properties", () => {
  const { endsAt: _, ...base } = draftOf().recurringSchedule!
  const withEndsAt = (endsAt: number | undefined) =>
    endsAt === undefined ? { ...base, startsAt: NOW_SECONDS - 2000 } : { ...base, startsAt: NOW_SECONDS - 2000, endsAt }
  const arbitraryDraft = fc
    .record({
      status: fc.constantFrom(...statuses),
      master: fc.boolean(),
      endsAt: fc.option(fc.integer({ min: NOW_SECONDS - 1000, max: NOW_SECONDS + 1000 }), { nil: undefined })
    })
    .map(({ status, master, endsAt }) =>
      draftOf({
        status,
        recurringSchedule: master ? withEndsAt(endsAt) : null
      })
    )
  const arbitraryAction = fc.record({
    type: fc.constantFrom(...actionTypes),
    reason: fc.option(fc.string(), { nil: undefined })
  })
  const arbitraryActor = fc.constantFrom(apiKey, system)

  it("never leaves the six statuses and only follows the table", () => {
    fc.assert(
      fc.property(arbitraryDraft, arbitraryAction, arbitraryActor, (draft, action, actor) => {
        const result = transition(draft, action, NOW, context(actor))
        if (Either.isLeft(result)) return true
        const next = result.right.draft
        return (
          statuses.includes(next.status) &&
          moves[action.type].from.includes(draft.status) &&
          next.status === moves[action.type].to &&
          draft.recurringSchedule !== null &&
          JSON.stringify({ ...next, status: draft.status, updatedAt: draft.updatedAt }) === JSON.stringify(draft)
        )
      })
    )
  })

  it("ended-recurring is terminal", () => {
    fc.assert(
      fc.property(arbitraryDraft, arbitraryAction, arbitraryActor, (draft, action, actor) => {
        const result = transition({ ...draft, status: "ended-recurring" }, action, NOW, context(actor))
        return Either.isLeft(result) && result.left._tag === "InvalidTransition"
      })
    )
  })

  it("any sequence of actions stays inside the six statuses and never leaves ended-recurring", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(arbitraryAction, arbitraryActor), { maxLength: 30 }), (steps) => {
        let draft = draftOf()
        let ended = false
        for (const [action, actor] of steps) {
          const result = transition(draft, action, NOW, context(actor))
          if (Either.isRight(result)) draft = result.right.draft
          if (!statuses.includes(draft.status)) return false
          if (ended && draft.status !== "ended-recurring") return false
          ended ||= draft.status === "ended-recurring"
        }
        return true
      })
    )
  })
})

describe("ActionRequest schema", () => {
  it("refuses an unknown action type with one issue", () => {
    const result = Schema.decodeUnknownEither(ActionRequest, { errors: "all" })({ type: "submit", reason: null })
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) {
      assert.deepStrictEqual(Issue.fromParseError(result.left), [
        {
          path: "type",
          message: 'must be "activate-recurring", "pause-recurring", "resume-recurring" or "end-recurring"'
        }
      ])
    }
  })
})
