/**
 * The in-process API (`waybill.forWorkspace(id)`) against the same routes through the web handler
 * (a Fetch `Request` in, no socket), on the embedded database: reading a webhook, listing drafts and
 * publishing an event. Then, on PostgreSQL (`DATABASE_URL`), the latency from a publish to its
 * receipt by a loopback receiver: `events.publish` against `events.publishIn` in a host's
 * node-postgres transaction (`BEGIN`, the publish, `COMMIT`), alternated one at a time.
 *
 * Targets: each in-process call ≥ 1.0 × its route through the handler (it skips the request's
 * reading, authentication and answer writing); publishIn's p50 latency ≤ 1.5 × publish's (the
 * commit wakes delivery as `POST /events` does).
 */
import { rm } from "node:fs/promises"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Waybill from "@waybill/server/Waybill"
import * as Testing from "@waybill/store-pg/Testing"
import pg from "pg"
import { figure, measureAsync, median, quantileOf, report, target } from "./harness.js"
import { freshDatabase } from "./server.js"

const key = "bench-in-process-key-0001"
const tour = (id: string) => ({
  type: "tour-created",
  payload: { tour: { id, status: "planned", substatus: null, properties: {} } }
})

const viaHandler = (waybill: Waybill.Waybill, method: string, path: string, body?: unknown) =>
  waybill
    .handler(
      new Request(`http://host${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    .then((response) => response.json())

const calls = async () => {
  const dataDir = await Testing.makeDataDir("waybill-bench-in-process-")
  const waybill = await Waybill.make({
    env: { WAYBILL_API_KEYS: `acme:${key}`, WAYBILL_DATA_DIR: dataDir, WAYBILL_LOG_LEVEL: "warn" }
  })
  try {
    const acme = waybill.forWorkspace("acme")
    const hook = await acme.webhooks.create({
      url: "https://receiver.example/bench",
      events: ["order-created"],
      auth: { type: "bearer", token: "bench-receiver-token-0001" }
    })
    const pairs: Array<readonly [string, () => Promise<unknown>, () => Promise<unknown>]> = [
      ["webhooks.get", () => acme.webhooks.get(hook.id), () => viaHandler(waybill, "GET", `/webhooks/${hook.id}`)],
      ["drafts.list", () => acme.drafts.list({ limit: 20 }), () => viaHandler(waybill, "GET", "/drafts?limit=20")],
      ["events.publish", () => acme.events.publish(tour("t")), () => viaHandler(waybill, "POST", "/events", tour("t"))]
    ]
    for (const [name, inProcess, handler] of pairs) {
      const rows = [await measureAsync("handler", handler), await measureAsync("in process", inProcess)]
      report(`${name}: in process against the route through the handler`, rows, "handler")
      target(`${name} in process / handler`, rows[1]!.opsPerSecond / rows[0]!.opsPerSecond, 1.0)
    }
  } finally {
    await waybill.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

const latency = async () => {
  if (process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === "") {
    console.log("\nSKIPPED publish → receipt latency: DATABASE_URL is not set")
    return
  }
  const database = await freshDatabase()
  const arrivals = new Map<string, number>()
  const receiver = createServer((req, res) => {
    arrivals.set(req.headers["x-event-id"] as string, performance.now())
    req.resume()
    req.on("end", () => res.end("ok"))
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()))
  const waybill = await Waybill.make({
    env: {
      DATABASE_URL: database.url,
      WAYBILL_SECRET_KEY: "be".repeat(32),
      WAYBILL_API_KEYS: `acme:${key}`,
      WAYBILL_ALLOW_PRIVATE_TARGETS: "true",
      WAYBILL_LOG_LEVEL: "warn"
    }
  })
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    const acme = waybill.forWorkspace("acme")
    await acme.webhooks.create({
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      events: ["tour-created"],
      auth: { type: "bearer", token: "bench-receiver-token-0001" }
    })
    const arrived = async (id: string, started: number) => {
      while (!arrivals.has(id)) await new Promise((resolve) => setTimeout(resolve, 1))
      return arrivals.get(id)! - started
    }
    const publish = async () => {
      const started = performance.now()
      const { id } = await acme.events.publish(tour("p"))
      return arrived(id, started)
    }
    const publishIn = async () => {
      const started = performance.now()
      await client.query("BEGIN")
      const { id } = await acme.events.publishIn(client, tour("q"))
      await client.query("COMMIT")
      return arrived(id, started)
    }
    for (let i = 0; i < 50; i++) await (i % 2 === 0 ? publish() : publishIn())
    const published: Array<number> = []
    const inTransaction: Array<number> = []
    for (let i = 0; i < 400; i++) {
      if (i % 2 === 0) published.push(await publish())
      else inTransaction.push(await publishIn())
    }
    console.log("\npublish → receipt, one at a time, alternated (ms)")
    for (const [name, values] of [
      ["events.publish", published],
      ["events.publishIn + COMMIT", inTransaction]
    ] as const) {
      console.log(
        `  ${name.padEnd(26)} p50 ${median(values).toFixed(2)}  p99 ${quantileOf(values, 0.99).toFixed(2)}  (${values.length})`
      )
    }
    figure(
      "publishIn p99 / publish p99",
      quantileOf(inTransaction, 0.99) / quantileOf(published, 0.99),
      "lower is better"
    )
    // publishIn within 1.5 × publish: their ratio the other way round at least 0.67.
    target("publish p50 / publishIn p50", median(published) / median(inTransaction), 0.67)
  } finally {
    await client.end()
    await waybill.close()
    receiver.close()
    await database.drop()
  }
}

await calls()
await latency()
