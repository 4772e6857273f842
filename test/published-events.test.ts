/**
 * Published events carry the host's own entities as they are (contract §5): a field the spec
 * names without a type takes any JSON value, and a draft action may name any actor with a
 * non-empty type. They are delivered unchanged; what the contract does type is still refused.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { call, forEachServer, isErrorBody, keys } from "./harness.js"
import { eventually, receiver } from "./receivers.js"

const referencedEntity = { orn: "orn:tour:tour_1", type: "tour", id: "tour_1" }

const draftAction = (actor: unknown) => ({
  type: "transport-draft-action-created",
  payload: {
    transportDraft: {
      id: "drf_host_1",
      origin: "manual",
      status: "paused-recurring",
      transportShapeId: "shape_line",
      createdAt: 1_798_000_000,
      updatedAt: 1_798_000_100
    },
    action: {
      id: "act_host_1",
      draftId: "drf_host_1",
      payload: { type: "pause-recurring", reason: "holiday" },
      actor,
      createdAt: 1_798_000_100,
      createdAtMilliseconds: 1_798_000_100_000
    }
  }
})

forEachServer("published events with the host's own fields", (it) => {
  it.effect("task-created with an assignee object is accepted and delivered unchanged", () =>
    Effect.gen(function* () {
      const target = yield* receiver()
      const registered = yield* call("/webhooks", {
        key: keys.a,
        json: {
          url: target.url,
          events: ["task-created", "transport-draft-action-created"],
          auth: { type: "bearer", token: "host-events" }
        }
      })
      assert.strictEqual(registered.status, 201, registered.text)
      const task = {
        id: "task_host_1",
        kind: { form: "proof-of-delivery", version: 3 },
        assignee: { type: "operator-user", id: "usr_42" },
        origin: ["sequence", "seq_9"],
        status: "waiting-for-customer",
        createdAt: "2026-11-24T10:00:00Z"
      }
      const published = yield* call("/events", {
        key: keys.a,
        json: { type: "task-created", payload: { task, referencedEntity } }
      })
      assert.strictEqual(published.status, 202, published.text)
      const action = yield* call("/events", { key: keys.a, json: draftAction({ type: "operator-user", id: "usr_42" }) })
      assert.strictEqual(action.status, 202, action.text)
      yield* eventually(
        Effect.sync(() => target.for(published.body.id).length === 1 && target.for(action.body.id).length === 1),
        "both deliveries"
      )
      assert.deepStrictEqual(JSON.parse(target.for(published.body.id)[0]!.body).payload, { task, referencedEntity })
      assert.deepStrictEqual(JSON.parse(target.for(action.body.id)[0]!.body).payload.action.actor, {
        type: "operator-user",
        id: "usr_42"
      })
    }).pipe(Effect.scoped)
  )

  it.effect("an actor with an empty type or no id, or an id that is not a string, is refused at its path", () =>
    Effect.gen(function* () {
      for (const [actor, path] of [
        [{ type: "", id: "usr_42" }, "payload.action.actor.type"],
        [{ type: "operator-user" }, "payload.action.actor.id"],
        [{ type: "operator-user", id: 42 }, "payload.action.actor.id"]
      ] as const) {
        const refused = yield* call("/events", { key: keys.a, json: draftAction(actor) })
        assert.isTrue(isErrorBody(refused, 400, "bad_request"), refused.text)
        assert.deepStrictEqual(
          refused.body.issues.map((issue: { path: string }) => issue.path),
          [path]
        )
      }
      const taskWithoutId = yield* call("/events", {
        key: keys.a,
        json: { type: "task-created", payload: { task: { assignee: { id: 1 } }, referencedEntity } }
      })
      assert.isTrue(isErrorBody(taskWithoutId, 400, "bad_request"))
      assert.deepStrictEqual(
        taskWithoutId.body.issues.map((issue: { path: string }) => issue.path),
        ["payload.task.id"]
      )
    })
  )
})
