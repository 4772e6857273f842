/**
 * The HTTP benchmark's floor: a minimal `@effect/platform` HttpApi server with one endpoint
 * (`GET /health` answering `{"status":"ok"}`), run in its own process like the reference
 * server, so that each of Waybill's routes is measured against what the framework itself costs.
 * Listens on `PORT` at 127.0.0.1.
 *
 * With `FLOOR_POST=1` its one endpoint is `POST /accept` instead: a JSON body decoded as
 * `Schema.Unknown` and answered `202 {"accepted":true}`, what the framework itself costs for a
 * request that carries a body (a reference for the POST routes, not their target's floor).
 */
import { createServer } from "node:http"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const Health = Schema.Struct({ status: Schema.Literal("ok") })

class System extends HttpApiGroup.make("system").add(HttpApiEndpoint.get("health", "/health").addSuccess(Health)) {}

class FloorApi extends HttpApi.make("floor").add(System) {}

const SystemLive = HttpApiBuilder.group(FloorApi, "system", (handlers) =>
  handlers.handle("health", () => Effect.succeed({ status: "ok" as const }))
)

const Accepted = Schema.Struct({ accepted: Schema.Literal(true) })

class Intake extends HttpApiGroup.make("intake").add(
  HttpApiEndpoint.post("accept", "/accept").setPayload(Schema.Unknown).addSuccess(Accepted, { status: 202 })
) {}

class PostFloorApi extends HttpApi.make("floor").add(Intake) {}

const IntakeLive = HttpApiBuilder.group(PostFloorApi, "intake", (handlers) =>
  handlers.handle("accept", () => Effect.succeed({ accepted: true as const }))
)

const port = Number(process.env.PORT ?? 0)

HttpApiBuilder.serve().pipe(
  Layer.provide(
    process.env.FLOOR_POST === "1"
      ? HttpApiBuilder.api(PostFloorApi).pipe(Layer.provide(IntakeLive))
      : HttpApiBuilder.api(FloorApi).pipe(Layer.provide(SystemLive))
  ),
  Layer.provide(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })),
  Layer.launch,
  NodeRuntime.runMain
)
