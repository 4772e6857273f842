/**
 * The reference server's instructions per event under callgrind, as it runs by default ("off")
 * or with metrics and tracing on ("on": `GET /metrics` scraped, every span exported over
 * OTLP/HTTP protobuf to a sink here): `instructions.bench.ts`'s `tracing` workload. The server
 * runs built, on a fresh PostgreSQL database, with one webhook to a receiver here that answers
 * 200 at once; `POST /events` (16 at a time, each with a sampled `traceparent`) are counted from
 * publishing until their delivery is received, after as many that warm it up. The counters stop
 * 7 s after the last delivery, so that the batch span processor (5 s schedule) has exported the
 * measured spans; what a server does idle in that time (its background loops) counts too,
 * about 3 % of the figure.
 */
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { callgrindRun, predictableV8 } from "./callgrind.js"
import { apiKey, freshDatabase, registerWebhook, startServer } from "./server.js"

const metricsToken = "bench-metrics-token-0001"
const concurrency = 16
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const body = JSON.stringify({
  type: "tour-created",
  payload: { tour: { id: "tour_bench", status: "planned", substatus: null, properties: {} } }
})

/** Instructions per event of one server, `off` or `on`, over `events` after `warmUp`. */
export const tracingInstructions = async (variant: "off" | "on", warmUp: number, events: number) => {
  let delivered = 0
  const sink = http.createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      if (request.url !== "/v1/traces") delivered++
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", () => resolve()))
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`
  const database = await freshDatabase()
  const run = callgrindRun()
  const server = await startServer(
    database.url,
    {
      WAYBILL_LOG_LEVEL: "warn",
      ...(variant === "on"
        ? {
            WAYBILL_METRICS_TOKEN: metricsToken,
            OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
            OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf"
          }
        : {})
    },
    { under: run.under, flags: predictableV8 }
  )
  try {
    await registerWebhook(server.base, `${sinkUrl}/delivered`)
    let sent = 0
    // Publishes `count` events, `concurrency` at a time, and waits for their deliveries.
    const publish = async (count: number) => {
      const until = sent + count
      const publisher = async () => {
        while (sent < until) {
          sent++
          const response = await fetch(`${server.base}/events`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${apiKey}`,
              "content-type": "application/json",
              traceparent: `00-${randomBytes(16).toString("hex")}-00f067aa0ba902b7-01`
            },
            body
          })
          if (response.status !== 202) throw new Error(`POST /events: ${response.status} ${await response.text()}`)
        }
      }
      await Promise.all(Array.from({ length: concurrency }, publisher))
      while (delivered < sent) await sleep(50)
      if (variant === "on") {
        await fetch(`${server.base}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } }).then((r) =>
          r.text()
        )
      }
    }
    await publish(warmUp)
    await sleep(6_000)
    run.control("-z", server.pid, "127.0.0.1")
    await publish(events)
    await sleep(7_000)
    run.control("-d", server.pid, "127.0.0.1")
    const total = run.dumped()
    if (total === null) throw new Error("callgrind wrote no dump of the measured events")
    return total / events
  } finally {
    server.stop()
    // callgrind writes its last part into the run's folder as the server exits.
    await server.exited
    sink.close()
    run.remove()
    await database.drop()
  }
}
