/**
 * The latency benchmark's floor: the smallest honest outbox relay, written for the
 * benchmark and nothing else, so that Waybill's publish→receipt latency is judged against what
 * the design itself costs on this machine.
 *
 * - Intake: `node:http`, `POST /events` with a bearer key and a JSON body `{ type, payload }`
 *   (400 otherwise); one statement, so one transaction, inserts the event and one delivery row
 *   per webhook subscribed to its type and `NOTIFY`s (delivered at commit); 202 `{ id }`.
 * - Relay: `RELAY_WORKERS` workers; a notification wakes one idle worker (a 1 s poll covers
 *   retries and run-out leases). A worker claims up to 50 due deliveries with
 *   `FOR UPDATE SKIP LOCKED` (the claim is a lease: `next_at` moves 30 s ahead), POSTs each with
 *   undici, signed HMAC-SHA256 as Standard Webhooks does, then marks the batch in one `UPDATE`
 *   (succeeded; a failure goes back to pending 10 s later), and claims again until none is due.
 *   At-least-once: a relay that dies mid-batch leaves leases that run out and are claimed again.
 *
 * Environment: `PORT`, `RELAY_API_KEY`, `RELAY_WEBHOOK_URL` (the one webhook, subscribed to
 * `tour-created`), and `DATABASE_URL` (PostgreSQL) or `RELAY_DATA_DIR` (PGlite in this process).
 * Compiled by esbuild without `keepNames` before it runs (see `bench/latency.bench.ts`).
 */
import { createHmac } from "node:crypto"
import { createServer } from "node:http"
import { PGlite } from "@electric-sql/pglite"
import pg from "pg"
import { Pool } from "undici"

interface Database {
  readonly query: (text: string, params?: ReadonlyArray<unknown>) => Promise<{ rows: Array<Record<string, unknown>> }>
  readonly listen: (channel: string, onNotify: () => void) => Promise<void>
}

const postgres = async (url: string): Promise<Database> => {
  const pool = new pg.Pool({ connectionString: url, max: Number(process.env.RELAY_CONNECTIONS ?? 32) })
  const listener = new pg.Client({ connectionString: url })
  await listener.connect()
  return {
    query: (text, params) => pool.query(text, params as Array<unknown>),
    listen: async (channel, onNotify) => {
      listener.on("notification", onNotify)
      await listener.query(`LISTEN ${channel}`)
    }
  }
}

const embedded = async (dataDir: string): Promise<Database> => {
  const db = await PGlite.create(dataDir)
  return {
    query: (text, params) => db.query(text, params as Array<unknown>),
    listen: async (channel, onNotify) => {
      await db.listen(channel, onNotify)
    }
  }
}

const db = process.env.DATABASE_URL
  ? await postgres(process.env.DATABASE_URL)
  : await embedded(process.env.RELAY_DATA_DIR ?? "memory://")

for (const statement of [
  "CREATE SCHEMA IF NOT EXISTS relay",
  "CREATE TABLE relay.events (id bigserial PRIMARY KEY, type text NOT NULL, body text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())",
  "CREATE TABLE relay.webhooks (id bigserial PRIMARY KEY, url text NOT NULL, event_type text NOT NULL, secret text NOT NULL)",
  `CREATE TABLE relay.deliveries (
     id bigserial PRIMARY KEY,
     event_id bigint NOT NULL REFERENCES relay.events (id),
     webhook_id bigint NOT NULL REFERENCES relay.webhooks (id),
     status text NOT NULL DEFAULT 'pending',
     attempts int NOT NULL DEFAULT 0,
     next_at timestamptz NOT NULL DEFAULT now()
   )`,
  "CREATE INDEX deliveries_due ON relay.deliveries (next_at) WHERE status <> 'succeeded'",
  "CREATE INDEX webhooks_type ON relay.webhooks (event_type)"
]) {
  await db.query(statement)
}
const secret = "relay-benchmark-secret-0001"
await db.query("INSERT INTO relay.webhooks (url, event_type, secret) VALUES ($1, 'tour-created', $2)", [
  process.env.RELAY_WEBHOOK_URL,
  secret
])

// ---- intake

const record = `WITH e AS (
    INSERT INTO relay.events (type, body) VALUES ($1, $2) RETURNING id, type
  ), d AS (
    INSERT INTO relay.deliveries (event_id, webhook_id)
    SELECT e.id, w.id FROM e JOIN relay.webhooks w ON w.event_type = e.type
    RETURNING id
  )
  SELECT e.id::text AS id, (SELECT count(*) FROM d) AS deliveries FROM e`

// NOTIFY after the commit, in a statement of its own, one at a time: a transaction that notifies
// holds PostgreSQL's notification lock from its commit until the commit is flushed, so that
// notifying in the event's transaction would let one event be written per WAL flush. A notify
// asked for while one is on its way is sent after it, so no commit goes unannounced; the 1 s poll
// covers a relay that dies in between.
let notifying = false
let notifyAgain = false
const announce = () => {
  if (notifying) {
    notifyAgain = true
    return
  }
  notifying = true
  db.query("SELECT pg_notify('relay', '')")
    .catch(() => undefined)
    .finally(() => {
      notifying = false
      if (notifyAgain) {
        notifyAgain = false
        announce()
      }
    })
}

const authorization = `Bearer ${process.env.RELAY_API_KEY}`

const answer = (res: import("node:http").ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text)
}

const intake = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/health") return answer(res, 200, { status: "ok" })
  if (req.method !== "POST" || req.url !== "/events") return answer(res, 404, { error: "not_found" })
  if (req.headers.authorization !== authorization) return answer(res, 401, { error: "unauthorized" })
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    let event: { type?: unknown; payload?: unknown }
    try {
      event = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      return answer(res, 400, { error: "invalid_json" })
    }
    if (typeof event?.type !== "string" || typeof event.payload !== "object" || event.payload === null) {
      return answer(res, 400, { error: "invalid_event" })
    }
    const body = JSON.stringify({ type: event.type, timestamp: new Date().toISOString(), data: event.payload })
    db.query(record, [event.type, body]).then(
      ({ rows }) => {
        announce()
        answer(res, 202, { id: `evt_${rows[0]!.id}` })
      },
      () => answer(res, 500, { error: "internal" })
    )
  })
})

// ---- relay

const claim = `UPDATE relay.deliveries d
     SET status = 'sending', attempts = d.attempts + 1, next_at = now() + interval '30 seconds'
    FROM relay.events e, relay.webhooks w
   WHERE d.id IN (
           SELECT id FROM relay.deliveries
            WHERE status <> 'succeeded' AND next_at <= now()
            ORDER BY next_at LIMIT 50
              FOR UPDATE SKIP LOCKED)
     AND e.id = d.event_id AND w.id = d.webhook_id
  RETURNING d.id::text AS id, d.attempts, e.id::text AS event_id, e.body, w.url, w.secret`

interface Claimed {
  readonly id: string
  readonly attempts: number
  readonly event_id: string
  readonly body: string
  readonly url: string
  readonly secret: string
}

const senders = new Map<string, Pool>()
const senderFor = (origin: string) => {
  let pool = senders.get(origin)
  if (pool === undefined) {
    pool = new Pool(origin, { connections: 64, headersTimeout: 20_000, bodyTimeout: 20_000 })
    senders.set(origin, pool)
  }
  return pool
}

const send = async (delivery: Claimed): Promise<boolean> => {
  const url = new URL(delivery.url)
  const timestamp = Math.floor(Date.now() / 1000)
  const signature = createHmac("sha256", delivery.secret)
    .update(`${delivery.id}.${timestamp}.${delivery.body}`)
    .digest("base64")
  try {
    const response = await senderFor(url.origin).request({
      path: url.pathname,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": delivery.id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": `v1,${signature}`,
        "x-event-id": `evt_${delivery.event_id}`,
        "x-delivery-attempt": String(delivery.attempts)
      },
      body: delivery.body
    })
    await response.body.dump()
    return response.statusCode >= 200 && response.statusCode < 300
  } catch {
    return false
  }
}

const idle: Array<() => void> = []
const wakeOne = () => idle.shift()?.()
const sleepUntilWoken = () =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      const at = idle.indexOf(wake)
      if (at >= 0) idle.splice(at, 1)
      resolve()
    }, 1000)
    const wake = () => {
      clearTimeout(timer)
      resolve()
    }
    idle.push(wake)
  })

// One round: claim, send, mark; false when nothing was due. A failed query leaves the claimed
// deliveries' leases to run out, after which they are claimed and sent again (at-least-once).
const round = async (): Promise<boolean> => {
  const claimed = (await db.query(claim)).rows as unknown as Array<Claimed>
  if (claimed.length === 0) return false
  const outcomes = await Promise.all(claimed.map(send))
  const succeeded = claimed.filter((_, i) => outcomes[i]).map((d) => d.id)
  const failed = claimed.filter((_, i) => !outcomes[i]).map((d) => d.id)
  if (succeeded.length > 0) {
    await db.query("UPDATE relay.deliveries SET status = 'succeeded' WHERE id = ANY($1::bigint[])", [succeeded])
  }
  if (failed.length > 0) {
    await db.query(
      "UPDATE relay.deliveries SET status = 'pending', next_at = now() + interval '10 seconds' WHERE id = ANY($1::bigint[])",
      [failed]
    )
  }
  return true
}

const worker = async () => {
  for (;;) {
    const worked = await round().catch(() => false)
    if (!worked) await sleepUntilWoken()
  }
}

await db.listen("relay", wakeOne)
for (let i = 0; i < Number(process.env.RELAY_WORKERS ?? 4); i++) void worker()
intake.keepAliveTimeout = 60_000
intake.listen(Number(process.env.PORT ?? 0), "127.0.0.1")
// Exits on SIGTERM (as the server does), so that a CPU profile (`BENCH_CPU_PROF`) is written.
process.on("SIGTERM", () => process.exit(0))
