/**
 * `POST /events`' optional `orderingKey` over HTTP (contract §8): 202 with a key of 1 to 255
 * characters, 400 at `orderingKey` otherwise. (directRoutes.test.ts holds the router to the same
 * answers.)
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Http from "../src/Http.js"
import { keyA, ports } from "./fixtures.js"

const web = Http.toWebHandler(ports)
afterAll(() => web.dispose())

const publish = async (orderingKey: unknown) => {
  const response = await web.handler(
    new Request("http://waybill.test/events", {
      method: "POST",
      headers: { authorization: `Bearer ${keyA}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "tour-deleted", payload: { tourId: "tour_k" }, orderingKey })
    })
  )
  return { status: response.status, body: (await response.json()) as { issues?: ReadonlyArray<{ path: string }> } }
}

describe("POST /events orderingKey", () => {
  it.live("202 with 1 to 255 characters; 400 at orderingKey when empty, longer or not a string", () =>
    Effect.promise(async () => {
      for (const key of ["tour_k", "x".repeat(255)]) assert.strictEqual((await publish(key)).status, 202)
      for (const key of ["", "x".repeat(256), 42, { id: "tour_k" }]) {
        const refused = await publish(key)
        assert.strictEqual(refused.status, 400, JSON.stringify(key))
        assert.deepStrictEqual(
          refused.body.issues?.map((issue) => issue.path),
          ["orderingKey"]
        )
      }
    })
  )
})
