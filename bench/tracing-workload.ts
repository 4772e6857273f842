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
import { callgrindRun, predictableV8 } from "./callgrind.js"
import { eventBody, scrape, startSink, traceparent } from "./observability-setup.js"
import { apiKey, freshDatabase, registerWebhook, startServer } from "./server.js"

const concurrency = 16
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Instructions per event of one server, `off` or `on`, over `events` after `warmUp`. */
export const tracingInstructions = async (variant: "off" | "on", warmUp: number, events: number) => {
  const sink = await startSink()
  const database = await freshDatabase()
  const run = callgrindRun()
  const server = await startServer(
    database.url,
    { WAYBILL_LOG_LEVEL: "warn", ...(variant === "on" ? sink.onEnv : {}) },
    { under: run.under, flags: predictableV8 }
  )
  try {
    await registerWebhook(server.base, `${sink.url}/delivered`)
    let sent = 0
    // Publishes `count` events, `concurrency` at a time, and waits for their deliveries.
    const publish = async (count: number) => {
      const until = sent + count
      const publisher = async () => {
        while (sent < until) {
          sent++
          const response = await fetch(`${server.base}/events`, {
            method: "POST",
            headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...traceparent() },
            body: eventBody
          })
          if (response.status !== 202) throw new Error(`POST /events: ${response.status} ${await response.text()}`)
        }
      }
      await Promise.all(Array.from({ length: concurrency }, publisher))
      while (sink.delivered("/delivered") < sent) await sleep(50)
      if (variant === "on") await scrape(server.base)
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
