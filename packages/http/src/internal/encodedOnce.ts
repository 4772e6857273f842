/**
 * Answers that are encoded once for as long as the same value is answered again: the schema's
 * JSON of `answerOf(key)` is kept, as a response, in a `WeakMap` keyed by `key`, so a response is
 * dropped with its key.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Schema from "effect/Schema"

/** `key` → its 200 JSON answer, `schema`'s encoding of `answerOf(key)`, encoded at its first answer. */
export const encodedOnce = <K extends object, A, I>(schema: Schema.Schema<A, I>, answerOf: (key: K) => A) => {
  const encode = Schema.encodeSync(schema)
  const responses = new WeakMap<K, HttpServerResponse.HttpServerResponse>()
  return (key: K): HttpServerResponse.HttpServerResponse => {
    let response = responses.get(key)
    if (response === undefined) {
      response = HttpServerResponse.unsafeJson(encode(answerOf(key)), { status: 200, contentType: "application/json" })
      responses.set(key, response)
    }
    return response
  }
}
