import * as SqlClient from "@effect/sql/SqlClient"
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { contractMaster } from "./fixtures.js"
import { baseUrl, call, forEachServer, isErrorBody, keys } from "./harness.js"

const productTransport = () => ({
  template: { id: "tpl_1" },
  shipperId: "shp_1",
  shipperTeamId: "team_1",
  shipperUserId: "user_1",
  order: { reference: "PO-1", customer: { name: "ACME", address: { countryCode: "DEU" } } },
  shipments: [{ id: "s1", pickup: { country: "DEU" }, delivery: { country: "AUT" } }],
  sharedShipment: {},
  tour: { vehicleClass: "vc_12t" },
  multiStopData: { stops: [{ address: { country: "DEU" } }, { address: { country: "FRA" } }] },
  discoveredFields: {},
  confirmedSections: ["order"],
  features: {},
  properties: { shipmentsCreator: {}, tourBar: {} }
})

// The fields a recurring master cannot do without (contract §2), as dotted paths.
const requiredOfMaster = [
  "origin",
  "status",
  "transportShapeId",
  "transport.multiStopData.stops",
  "transport.tour.vehicleClass",
  "recurringSchedule.cronExpressions",
  "recurringSchedule.timezone",
  "recurringSchedule.leadTimeDays"
] as const

const without = (body: Record<string, unknown>, path: string): void => {
  const segments = path.split(".")
  let parent = body
  for (const segment of segments.slice(0, -1)) parent = parent[segment] as Record<string, unknown>
  delete parent[segments[segments.length - 1]!]
}

const outbox = (draftId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ type: string; workspace_id: string }>`
      SELECT type, workspace_id FROM events WHERE body LIKE ${`%"${draftId}"%`} ORDER BY seq`
  )

forEachServer("drafts over HTTP", (it) => {
  it.effect("POST /drafts creates the contract's example master; GET and list return it", () =>
    Effect.gen(function* () {
      const created = yield* call("/drafts", { key: keys.a, json: contractMaster() })
      assert.strictEqual(created.status, 201, created.text)
      const draft = created.body
      assert.match(draft.id, /^drf_[0-9a-z]{26}$/)
      assert.deepStrictEqual(Object.keys(draft).sort(), [
        "createdAt",
        "id",
        "inboxId",
        "isValid",
        "name",
        "origin",
        "payload",
        "recurringSchedule",
        "status",
        "templateDraftId",
        "transport",
        "transportShapeId",
        "updatedAt"
      ])
      assert.strictEqual(draft.status, "draft")
      assert.strictEqual(draft.recurringSchedule.vehicleClassAdjustmentStrategy, "preserve")
      const read = yield* call(`/drafts/${draft.id}`, { key: keys.a })
      assert.deepStrictEqual(read.body, draft)
      const list = yield* call("/drafts?status=draft&limit=100", { key: keys.a })
      assert.isTrue(list.body.data.some((d: { id: string }) => d.id === draft.id))
      assert.property(list.body, "nextCursor")
      const rows = yield* outbox(draft.id)
      assert.deepStrictEqual(
        rows.map((row) => row.type),
        ["transport-drafts-created"]
      )
    })
  )

  it.effect("a bad draft gets every violation in one 400", () =>
    Effect.gen(function* () {
      const body = contractMaster()
      body.transport.multiStopData.stops = [body.transport.multiStopData.stops[0]!]
      const bad = {
        ...body,
        name: "Line {{ region }}",
        transport: { ...body.transport, tour: {} },
        recurringSchedule: { ...body.recurringSchedule, startsAt: 1_000_000_000 }
      }
      const reply = yield* call("/drafts", { key: keys.a, json: bad })
      assert.isTrue(isErrorBody(reply, 400, "bad_request"), reply.text)
      const paths = reply.body.issues.map((issue: { path: string }) => issue.path)
      for (const expected of [
        "name",
        "transport.multiStopData.stops",
        "transport.tour.vehicleClass",
        "recurringSchedule.startsAt"
      ]) {
        assert.include(paths, expected, JSON.stringify(reply.body.issues))
      }
      const decodeError = yield* call("/drafts", {
        key: keys.a,
        json: { origin: "fax", status: 7, transportShapeId: "shape_line" }
      })
      assert.isTrue(isErrorBody(decodeError, 400, "bad_request"))
      assert.includeMembers(
        decodeError.body.issues.map((issue: { path: string }) => issue.path),
        ["origin", "status"]
      )
      const recurringStatus = yield* call("/drafts", {
        key: keys.a,
        json: { ...contractMaster(), status: "active-recurring" }
      })
      assert.isTrue(isErrorBody(recurringStatus, 400, "bad_request"))
      const listBad = yield* call("/drafts?limit=0", { key: keys.a })
      assert.isTrue(isErrorBody(listBad, 400, "bad_request"))
      assert.deepStrictEqual(
        listBad.body.issues.map((issue: { path: string }) => issue.path),
        ["limit"]
      )
      // Query values the schema refuses: one issue each, in words a user can act on.
      const badQuery = yield* call("/drafts?status=nope&limit=abc", { key: keys.a })
      assert.isTrue(isErrorBody(badQuery, 400, "bad_request"))
      assert.deepStrictEqual(badQuery.body.issues, [
        { path: "status", message: "must be one of the six draft statuses" },
        { path: "limit", message: "must be an integer" }
      ])
      // A body that is no object: one issue at the root, no schema dump.
      const array = yield* call("/drafts", { key: keys.a, json: [] })
      assert.deepStrictEqual(array.body.issues, [{ path: "", message: "must be a JSON object" }])
    })
  )

  it.effect("an empty body, or one with only a name, gets every required field in one 400", () =>
    Effect.gen(function* () {
      for (const json of [{}, { name: "Line" }, { origin: "fax", status: 7 }]) {
        const reply = yield* call("/drafts", { key: keys.a, json })
        assert.isTrue(isErrorBody(reply, 400, "bad_request"), reply.text)
        assert.deepStrictEqual(
          reply.body.issues.map((issue: { path: string }) => issue.path),
          ["origin", "status", "transportShapeId"],
          reply.text
        )
      }
      const notAnObject = yield* call("/drafts", { key: keys.a, json: ["origin"] })
      assert.isTrue(isErrorBody(notAnObject, 400, "bad_request"), notAnObject.text)
      assert.deepStrictEqual(notAnObject.body.issues, [{ path: "", message: "must be a JSON object" }])
    })
  )

  it.effect("a master missing any subset of its required fields gets an issue at each of them", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.subarray([...requiredOfMaster], { minLength: 1 }), async (missing) => {
            const body: Record<string, unknown> = contractMaster()
            for (const path of missing) without(body, path)
            const response = await fetch(`${base}/drafts`, {
              method: "POST",
              headers: { authorization: `Bearer ${keys.a}`, "content-type": "application/json" },
              body: JSON.stringify(body)
            })
            const reply = (await response.json()) as { issues: ReadonlyArray<{ path: string }> }
            assert.strictEqual(response.status, 400, JSON.stringify(reply))
            const paths = new Set(reply.issues.map((issue) => issue.path))
            for (const path of missing) assert.isTrue(paths.has(path), `${path} missing from ${JSON.stringify(reply)}`)
          }),
          { numRuns: 60 }
        )
      )
    })
  )

  it.effect("actions move a master through its statuses; refused moves are 409", () =>
    Effect.gen(function* () {
      const draft = (yield* call("/drafts", { key: keys.a, json: contractMaster() })).body
      const act = (type: string) => call(`/drafts/${draft.id}/actions`, { key: keys.a, json: { type, reason: "test" } })
      const activated = yield* act("activate-recurring")
      assert.strictEqual(activated.status, 200, activated.text)
      assert.strictEqual(activated.body.transportDraft.status, "active-recurring")
      const action = activated.body.action
      assert.match(action.id, /^act_/)
      assert.deepStrictEqual(action.payload, { type: "activate-recurring", reason: "test" })
      assert.deepStrictEqual(action.actor, { type: "api-key", id: "env-1" })
      assert.strictEqual(action.createdAtMilliseconds, action.createdAt * 1000 + (action.createdAtMilliseconds % 1000))
      assert.isTrue(isErrorBody(yield* act("activate-recurring"), 409, "invalid_transition"))
      assert.isTrue(isErrorBody(yield* act("resume-recurring"), 409, "invalid_transition"))
      assert.strictEqual((yield* act("pause-recurring")).body.transportDraft.status, "paused-recurring")
      assert.isTrue(isErrorBody(yield* call(`/drafts/${draft.id}`, { key: keys.a, method: "DELETE" }), 409, "conflict"))
      assert.strictEqual((yield* act("resume-recurring")).body.transportDraft.status, "active-recurring")
      assert.strictEqual((yield* act("end-recurring")).body.transportDraft.status, "ended-recurring")
      assert.isTrue(isErrorBody(yield* act("pause-recurring"), 409, "invalid_transition"))
      const unknownType = yield* act("restart")
      assert.isTrue(isErrorBody(unknownType, 400, "bad_request"))
      const types = (yield* outbox(draft.id)).map((row) => row.type)
      assert.deepStrictEqual(types, [
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
      const oneOff = (yield* call("/drafts", {
        key: keys.a,
        json: { origin: "manual", status: "draft", transportShapeId: "shape_ftl" }
      })).body
      assert.isTrue(
        isErrorBody(
          yield* call(`/drafts/${oneOff.id}/actions`, { key: keys.a, json: { type: "activate-recurring" } }),
          409,
          "invalid_transition"
        )
      )
    })
  )

  it.effect("two simultaneous activations over HTTP: one 200, one 409", () =>
    Effect.gen(function* () {
      const draft = (yield* call("/drafts", { key: keys.a, json: contractMaster() })).body
      const replies = yield* Effect.all(
        [1, 2].map(() => call(`/drafts/${draft.id}/actions`, { key: keys.a, json: { type: "activate-recurring" } })),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(replies.map((reply) => reply.status).sort(), [200, 409])
      const types = (yield* outbox(draft.id)).map((row) => row.type)
      assert.strictEqual(types.filter((type) => type === "transport-draft-recurring-activated").length, 1)
    })
  )

  it.effect("DELETE answers 204 then 404; decode drafts emit decode-job-result", () =>
    Effect.gen(function* () {
      const draft = (yield* call("/drafts", {
        key: keys.a,
        json: {
          origin: "decode",
          status: "review-order",
          transportShapeId: "shape_inbox",
          inboxId: "inb_1",
          payload: { raw: true }
        }
      })).body
      assert.strictEqual(draft.inboxId, "inb_1")
      const removed = yield* call(`/drafts/${draft.id}`, { key: keys.a, method: "DELETE" })
      assert.strictEqual(removed.status, 204)
      assert.isTrue(isErrorBody(yield* call(`/drafts/${draft.id}`, { key: keys.a }), 404, "not_found"))
      assert.deepStrictEqual((yield* outbox(draft.id)).map((row) => row.type).sort(), [
        "decode-job-result",
        "transport-drafts-created",
        "transport-drafts-deleted"
      ])
    })
  )

  it.effect("POST /products/{id}/execute: 404s, the exact 412 message, and 200", () =>
    Effect.gen(function* () {
      const broken = {
        ...productTransport(),
        shipperId: 42,
        order: { customer: { address: { countryCode: "DE" } } }
      } as Record<string, unknown>
      delete broken.features
      const bad = (yield* call("/drafts", {
        key: keys.a,
        json: { origin: "manual", status: "draft", transportShapeId: "shape_ftl", transport: broken }
      })).body
      const good = (yield* call("/drafts", {
        key: keys.a,
        json: { origin: "manual", status: "draft", transportShapeId: "shape_ftl", transport: productTransport() }
      })).body
      assert.isTrue(
        isErrorBody(
          yield* call("/products/prod_nope/execute", { key: keys.a, json: { draftId: good.id } }),
          404,
          "not_found"
        )
      )
      assert.isTrue(
        isErrorBody(
          yield* call("/products/prod_ftl/execute", { key: keys.a, json: { draftId: "drf_missing" } }),
          404,
          "not_found"
        )
      )
      const failed = yield* call("/products/prod_ftl/execute", { key: keys.a, json: { draftId: bad.id } })
      assert.isTrue(isErrorBody(failed, 412, "precondition_failed"), failed.text)
      const prefix = "TransportForProductsSchema parse failed: "
      assert.isTrue(failed.body.message.startsWith(prefix))
      const listed = JSON.parse(failed.body.message.slice(prefix.length)) as Array<{ path: Array<string | number> }>
      const paths = listed.map((issue) => issue.path.join("."))
      assert.includeMembers(paths, ["shipperId", "features", "order.customer.address.countryCode"])
      assert.includeMembers(
        failed.body.issues.map((issue: { path: string }) => issue.path),
        ["transport.shipperId", "transport.features"]
      )
      const ok = yield* call("/products/prod_ftl/execute", { key: keys.a, json: { draftId: good.id } })
      assert.strictEqual(ok.status, 200, ok.text)
      assert.deepStrictEqual(
        [ok.body.productId, ok.body.draftId, ok.body.productsMode],
        ["prod_ftl", good.id, "booking"]
      )
    })
  )

  it.effect("another workspace's draft is 404 everywhere, never 403", () =>
    Effect.gen(function* () {
      const draft = (yield* call("/drafts", { key: keys.a, json: contractMaster() })).body
      const foreign = [
        yield* call(`/drafts/${draft.id}`, { key: keys.b }),
        yield* call(`/drafts/${draft.id}`, { key: keys.b, method: "DELETE" }),
        yield* call(`/drafts/${draft.id}/actions`, { key: keys.b, json: { type: "activate-recurring" } }),
        yield* call("/products/prod_ftl/execute", { key: keys.b, json: { draftId: draft.id } })
      ]
      for (const reply of foreign) assert.isTrue(isErrorBody(reply, 404, "not_found"), reply.text)
      const list = yield* call("/drafts?limit=100", { key: keys.b })
      assert.isFalse(list.body.data.some((d: { id: string }) => d.id === draft.id))
      assert.strictEqual((yield* call(`/drafts/${draft.id}`, { key: keys.a })).body.status, "draft")
      const rows = yield* outbox(draft.id)
      assert.isTrue(rows.every((row) => row.workspace_id === "ws-a"))
    })
  )
})
