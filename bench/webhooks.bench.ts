/**
 * Events published → fanned out, delivered and recorded, end to end (issue 9): the reference
 * server in its own process on PostgreSQL, a loopback receiver that answers at once, HMAC
 * webhooks. Deliveries/s and publish→receipt latency, beside a bare HTTP client loop posting the
 * same bodies to the same receiver (the ceiling), in one run.
 */
import { Agent, createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { target } from "./harness.js"
import { apiKey, freshDatabase, startServer } from "./server.js"

const EVENTS = Number(process.env.BENCH_EVENTS ?? 3000)
const CONCURRENCY = 32

// The receiver: answers 200 at once and notes when each event arrived.
const arrivals = new Map<string, number>()
let bareReceived = 0
const receiver = createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    const eventId = req.headers["x-event-id"]
    if (typeof eventId === "string") arrivals.set(eventId, performance.now())
    else bareReceived++
    res.writeHead(200).end()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
const post = (url: string, body: string, headers: Record<string, string>) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", ...headers } },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk) => (text += chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }))
      }
    )
    req.on("error", reject)
    req.end(body)
  })

const pool = async (count: number, task: (index: number) => Promise<void>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await task(next++)
    })
  )
}

const percentile = (values: Array<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const body = (i: number) =>
  JSON.stringify({
    type: "tour-created",
    payload: { tour: { id: `tour_${i}`, status: "planned", substatus: null, properties: { prop_region: "opt_north" } } }
  })

const database = await freshDatabase()
const server = await startServer(database.url, { WAYBILL_DELIVERY_TIMEOUT_MS: "5000" })
try {
  const auth = { authorization: `Bearer ${apiKey}` }
  const registered = await post(
    `${server.base}/webhooks`,
    JSON.stringify({
      url: receiverUrl,
      events: ["tour-created"],
      auth: { type: "hmac", secret: "benchmark-hmac-secret-0001" }
    }),
    auth
  )
  if (registered.status !== 201) throw new Error(`registration failed: ${registered.text}`)

  // The ceiling: the same bodies posted straight to the receiver.
  const bareStart = performance.now()
  await pool(EVENTS, (i) => post(receiverUrl, body(i), {}).then(() => undefined))
  const bareRate = (EVENTS / (performance.now() - bareStart)) * 1000

  // End to end: publish every event, then wait until every one has arrived.
  const published = new Map<string, number>()
  const start = performance.now()
  await pool(EVENTS, async (i) => {
    const sentAt = performance.now()
    const reply = await post(`${server.base}/events`, body(i), auth)
    if (reply.status !== 202) throw new Error(`publish failed: ${reply.text}`)
    published.set(JSON.parse(reply.text).id, sentAt)
  })
  const publishedAt = performance.now()
  while (arrivals.size < EVENTS && performance.now() - publishedAt < 120_000) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const end = Math.max(...arrivals.values())
  const latencies = [...published].flatMap(([id, sentAt]) => {
    const at = arrivals.get(id)
    return at === undefined ? [] : [at - sentAt]
  })
  const rate = (arrivals.size / (end - start)) * 1000
  console.log(`\nWebhooks end to end: ${EVENTS} events, ${CONCURRENCY} publishers, PostgreSQL, HMAC, loopback receiver`)
  console.log(`  bare HTTP loop (ceiling)       ${bareRate.toFixed(0).padStart(7)} req/s`)
  console.log(
    `  publish → delivered → recorded ${rate.toFixed(0).padStart(7)} deliveries/s   p50 ${percentile(
      latencies,
      50
    ).toFixed(0)} ms   p99 ${percentile(latencies, 99).toFixed(0)} ms   (publishing alone: ${(
      (EVENTS / (publishedAt - start)) * 1000
    ).toFixed(0)} events/s)`
  )
  console.log(`  delivered ${arrivals.size} of ${EVENTS}; bare requests received ${bareReceived}`)
  const ok = target("end to end ÷ bare loop", rate / bareRate, 0.25) && arrivals.size === EVENTS
  if (!ok) process.exitCode = 1
} finally {
  server.stop()
  receiver.close()
  agent.destroy()
  await new Promise((resolve) => setTimeout(resolve, 500))
  await database.drop()
}
