import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Payload from "../src/Payload.js"
import { sampleOf } from "./fixtures.js"

const legIssues = (loads: ReadonlyArray<unknown>) => {
  const result = Payload.decodePayload("leg-created", { leg: { id: "leg_1", loads } })
  return Either.isLeft(result) ? result.left : []
}

const taskIssues = (type: "task-created" | "task-completed", task: unknown) => {
  const result = Payload.decodePayload(type, { task, referencedEntity: sampleOf("ReferencedEntity") })
  return Either.isLeft(result) ? result.left : []
}

describe("entity rules", () => {
  describe("leg loads", () => {
    it("accepts Returned, Lost, Damaged (disposed or not) and loads in any other status", () => {
      assert.deepStrictEqual(
        legIssues([
          { id: "a", status: "Returned", returnShipmentId: "shp_2" },
          { id: "b", status: "Perished", writeOff: { reason: "Lost", writtenOffBy: "usr_1", note: "gone" } },
          { id: "c", status: "Perished", writeOff: { reason: "Damaged", writtenOffBy: "usr_1" } },
          {
            id: "d",
            status: "Perished",
            writeOff: { reason: "Damaged", writtenOffBy: "usr_1", disposedAt: 1_798_000_000, disposedBy: "usr_2" }
          },
          { id: "e", status: "delivered", anything: { else: 1 } },
          { id: "f" }
        ]),
        []
      )
    })

    it("requires a write-off on a Perished load and refuses one elsewhere", () => {
      assert.deepStrictEqual(
        legIssues([
          { id: "a", status: "Perished" },
          { id: "b", status: "Returned", writeOff: { reason: "Lost", writtenOffBy: "usr_1" } }
        ]).map((issue) => issue.path),
        ["leg.loads.0.writeOff", "leg.loads.1.writeOff"]
      )
    })

    it("never lets a Lost load carry disposedAt or disposedBy", () => {
      const issues = legIssues([
        { id: "a", status: "Perished", writeOff: { reason: "Lost", writtenOffBy: "u", disposedAt: 1 } },
        { id: "b", status: "Perished", writeOff: { reason: "Lost", writtenOffBy: "u", disposedBy: "u" } }
      ])
      assert.deepStrictEqual(
        issues.map((issue) => issue.path),
        ["leg.loads.0.writeOff.disposedAt", "leg.loads.1.writeOff.disposedBy"]
      )
      assert.match(issues[0]!.message, /Lost/)
    })

    it("requires disposedAt and disposedBy together on a Damaged load", () => {
      assert.deepStrictEqual(
        legIssues([
          { id: "a", status: "Perished", writeOff: { reason: "Damaged", writtenOffBy: "u", disposedAt: 1 } },
          { id: "b", status: "Perished", writeOff: { reason: "Damaged", writtenOffBy: "u", disposedBy: "u" } }
        ]).map((issue) => issue.path),
        ["leg.loads.0.writeOff.disposedBy", "leg.loads.1.writeOff.disposedAt"]
      )
    })

    it("checks the write-off's reason (Lost or Damaged) and that it says who wrote it off; their values may be any JSON", () => {
      assert.deepStrictEqual(
        legIssues([
          { id: "a", status: "Perished", writeOff: { reason: "Stolen", writtenOffBy: "u" } },
          { id: "b", status: "Perished", writeOff: { reason: "Lost" } },
          {
            id: "c",
            status: "Perished",
            writeOff: { reason: "Damaged", writtenOffBy: { type: "operator-user", id: "u" }, note: 5 }
          }
        ]).map((issue) => issue.path),
        ["leg.loads.0.writeOff.reason", "leg.loads.1.writeOff.writtenOffBy"]
      )
    })
  })

  describe("tasks", () => {
    it("takes any JSON value where the spec names a field without a type (kind, assignee, origin, timestamps…)", () => {
      assert.deepStrictEqual(taskIssues("task-created", sampleOf("Task")), [])
      assert.deepStrictEqual(
        taskIssues("task-created", {
          id: "task_1",
          kind: { form: "pod" },
          assignee: { type: "operator-user", id: "usr_7" },
          origin: ["sequence", 3],
          createdAt: "2026-11-24T10:00:00Z",
          templateId: 3,
          status: null
        }),
        []
      )
      assert.deepStrictEqual(
        taskIssues("task-created", { kind: "k" }).map((issue) => issue.path),
        ["task.id"]
      )
    })

    it("refuses a templateKey without templateId", () => {
      assert.deepStrictEqual(
        taskIssues("task-created", { id: "task_1", kind: "k", templateKey: "pod" }).map((issue) => issue.path),
        ["task.templateKey"]
      )
    })

    it("task-completed carries outcome.formOutput", () => {
      assert.deepStrictEqual(taskIssues("task-completed", sampleOf("CompletedTask")), [])
      assert.deepStrictEqual(
        taskIssues("task-completed", { id: "task_1", kind: "form", outcome: {} }).map((issue) => issue.path),
        ["task.outcome.formOutput"]
      )
      assert.deepStrictEqual(
        taskIssues("task-completed", { id: "task_1", kind: "form" }).map((issue) => issue.path),
        ["task.outcome"]
      )
    })
  })

  describe("tours and actions", () => {
    it("types tour id, status, substatus and properties; property values of any type pass", () => {
      const ok = Payload.decodePayload("tour-edited", {
        tour: { id: "tour_1", status: "s", substatus: "x", properties: { a: [1], b: null, c: { d: true } } }
      })
      assert.isTrue(Either.isRight(ok))
      const bad = Payload.decodePayload("tour-edited", { tour: { id: 1, status: null, substatus: 2, properties: [] } })
      assert.deepStrictEqual(Either.isLeft(bad) ? bad.left.map((issue) => issue.path).sort() : [], [
        "tour.id",
        "tour.properties",
        "tour.status",
        "tour.substatus"
      ])
    })

    it("types an action record's payload.type, createdAt and createdAtMilliseconds", () => {
      const result = Payload.decodePayload("leg-action-created", {
        leg: { id: "leg_1" },
        action: { id: "act_1", payload: { type: 1 }, createdAt: 1.5, createdAtMilliseconds: -1 }
      })
      assert.deepStrictEqual(Either.isLeft(result) ? result.left.map((issue) => issue.path).sort() : [], [
        "action.createdAt",
        "action.createdAtMilliseconds",
        "action.payload.type"
      ])
    })

    it("takes oldStatus and newStatus of tour-action-created together", () => {
      const base = { tour: sampleOf("Tour"), action: sampleOf("TourAction") }
      assert.isTrue(Either.isRight(Payload.decodePayload("tour-action-created", base)))
      assert.isTrue(
        Either.isRight(
          Payload.decodePayload("tour-action-created", { ...base, oldStatus: "planned", newStatus: "planned" })
        )
      )
      const onlyOld = Payload.decodePayload("tour-action-created", { ...base, oldStatus: "planned" })
      assert.deepStrictEqual(Either.isLeft(onlyOld) ? onlyOld.left.map((issue) => issue.path) : [], ["newStatus"])
      const onlyNew = Payload.decodePayload("tour-action-created", { ...base, newStatus: "planned" })
      assert.deepStrictEqual(Either.isLeft(onlyNew) ? onlyNew.left.map((issue) => issue.path) : [], ["oldStatus"])
    })

    it("requires suggestedBid on every callout, other stats optional (secret auctions)", () => {
      const base = { action: sampleOf("CalloutAction") }
      assert.isTrue(
        Either.isRight(
          Payload.decodePayload("callout-action-created", { ...base, callouts: [{ id: "co_1", suggestedBid: null }] })
        )
      )
      const missing = Payload.decodePayload("callout-action-created", { ...base, callouts: [{ id: "co_1" }] })
      assert.deepStrictEqual(Either.isLeft(missing) ? missing.left.map((issue) => issue.path) : [], [
        "callouts.0.suggestedBid"
      ])
    })
  })
})

describe("transport draft actions on published events", () => {
  const actionIssues = (actor: unknown) => {
    const result = Payload.decodePayload("transport-draft-action-created", {
      transportDraft: sampleOf("TransportDraft"),
      action: { ...(sampleOf("TransportDraftAction") as object), actor }
    })
    return Either.isLeft(result) ? result.left : []
  }

  it("take any actor with a non-empty type and an id (a host's own users)", () => {
    for (const type of ["api-key", "system", "operator-user", "integration"]) {
      assert.deepStrictEqual(actionIssues({ type, id: "u1" }), [], type)
    }
  })

  it("refuse an empty actor type or a missing id, at their paths", () => {
    assert.deepStrictEqual(
      actionIssues({ type: "", id: "u1" }).map((issue) => issue.path),
      ["action.actor.type"]
    )
    assert.deepStrictEqual(
      actionIssues({ type: "operator-user" }).map((issue) => issue.path),
      ["action.actor.id"]
    )
  })
})
