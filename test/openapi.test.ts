import { assert } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { all as eventTypes } from "@waybill/events/EventType"
import { Effect } from "effect"
import { call, forEachServer } from "./harness.js"

forEachServer("OpenAPI document", (it) => {
  it.effect("/openapi.json validates as OpenAPI 3.1 and its webhooks name all 60 event types", () =>
    Effect.gen(function* () {
      const reply = yield* call("/openapi.json")
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(reply.body.openapi, "3.1.0")
      const validator = new Validator()
      const result = yield* Effect.promise(() => validator.validate(reply.body))
      assert.isTrue(result.valid, JSON.stringify(result.errors, null, 2)?.slice(0, 2000))
      assert.deepStrictEqual(Object.keys(reply.body.webhooks).sort(), [...eventTypes].sort())
      assert.strictEqual(eventTypes.length, 60)
      for (const path of [
        "/drafts",
        "/drafts/{id}",
        "/drafts/{id}/actions",
        "/products/{productId}/execute",
        "/health"
      ]) {
        assert.property(reply.body.paths, path)
      }
    })
  )
})
