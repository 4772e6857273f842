/**
 * The typed client against a running server.
 *
 *   WAYBILL_API_KEY=<key> npx tsx examples/embed/src/client.ts
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as ApiError from "@waybill/http/ApiError"
import * as Client from "@waybill/http/Client"
import * as Effect from "effect/Effect"

const program = Effect.gen(function* () {
  const waybill = yield* Client.make({
    baseUrl: process.env.WAYBILL_URL ?? "http://127.0.0.1:3000",
    apiKey: process.env.WAYBILL_API_KEY ?? ""
  })
  const shapes = yield* waybill.referenceData.transportShapes()
  // Payloads are typed and encoded with the API's own schemas.
  const draft = yield* waybill.drafts.create({
    payload: { origin: "manual", status: "draft", name: "From the typed client", transportShapeId: shapes.data[0]!.id }
  })
  const page = yield* waybill.drafts.list({ urlParams: { limit: 5 } })
  console.log(`created ${draft.id}; ${page.data.length} draft(s) on the first page`)
}).pipe(
  // Error bodies are typed failures: one class per status of the contract.
  Effect.catchIf(
    (error) => error instanceof ApiError.Unauthorized,
    (error) => Effect.fail(`check WAYBILL_API_KEY: ${Client.describeError(error)}`)
  ),
  // Anything else that failed, as one line.
  Effect.mapError(Client.describeError),
  Effect.provide(FetchHttpClient.layer)
)

Effect.runPromise(Effect.either(program)).then((result) => {
  if (result._tag === "Left") {
    console.error(result.left)
    process.exitCode = 1
  }
})
