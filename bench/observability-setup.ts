/**
 * What the two benchmarks of observability's cost share (`observability.bench.ts` in rates,
 * `tracing-workload.ts` in instructions): a sink that takes both the deliveries and the OTLP span
 * exports, the "on" server's variables, and the `POST /events` they send.
 */
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

// The "on" server's `WAYBILL_METRICS_TOKEN`, for its scrapes.
const metricsToken = "bench-metrics-token-0001"

/** The body of every `POST /events`: a `tour-created`. */
export const eventBody = JSON.stringify({
  type: "tour-created",
  payload: { tour: { id: "tour_bench", status: "planned", substatus: null, properties: {} } }
})

/** A sampled `traceparent` with a random trace id, as clients make them (a ratio sampler decides on its bits). */
export const traceparent = () => ({ traceparent: `00-${randomBytes(16).toString("hex")}-00f067aa0ba902b7-01` })

/**
 * A receiver on 127.0.0.1 that answers 200 at once: counts span exports (`/v1/traces`) and
 * deliveries per path.
 */
export const startSink = async () => {
  const delivered = new Map<string, number>()
  let spanExports = 0
  const sink = http.createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      const path = request.url ?? "/"
      if (path === "/v1/traces") spanExports++
      else delivered.set(path, (delivered.get(path) ?? 0) + 1)
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", () => resolve()))
  const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`
  return {
    url,
    delivered: (path: string) => delivered.get(path) ?? 0,
    spanExports: () => spanExports,
    close: () => sink.close(),
    /** The variables that turn metrics and tracing on, every span exported to this sink. */
    onEnv: {
      WAYBILL_METRICS_TOKEN: metricsToken,
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf"
    }
  }
}

/** One scrape of the server's `GET /metrics`, as Prometheus makes it. */
export const scrape = (base: string) =>
  fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } }).then((r) => r.text())
