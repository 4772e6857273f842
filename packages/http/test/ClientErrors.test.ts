import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as ApiError from "../src/ApiError.js"
import * as Client from "../src/Client.js"

describe("Client.describeError", () => {
  it("says each kind of failure in one line", () => {
    const unauthorized = new ApiError.Unauthorized({ message: "A valid API key is required", issues: [] })
    assert.strictEqual(Client.describeError(unauthorized), "401 unauthorized: A valid API key is required")

    const request = HttpClientRequest.get("http://127.0.0.1:9/drafts")
    const unreachable = new HttpClientError.RequestError({
      request,
      reason: "Transport",
      cause: new Error("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:9") })
    })
    assert.strictEqual(
      Client.describeError(unreachable),
      "cannot reach http://127.0.0.1:9/drafts: connect ECONNREFUSED 127.0.0.1:9"
    )

    const decoded = Schema.decodeUnknownEither(Schema.Struct({ id: Schema.String }))({ id: 1 })
    assert.isTrue(decoded._tag === "Left")
    if (decoded._tag === "Left") {
      const line = Client.describeError(decoded.left)
      assert.match(line, /^the answer does not match the API: /)
      assert.notInclude(line, "\n")
    }
  })
})
