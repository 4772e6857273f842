/**
 * The orders host (`src/orders.ts`) as a process of its own, killed with SIGKILL between the
 * statements of a booking: before its event is written, and after it but before COMMIT. Neither
 * leaves an order without its event or an event without its order; after a restart the webhook
 * gets exactly the events of the orders that exist.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect } from "effect"
import pg from "pg"

const url = process.env.DATABASE_URL
const key = "orders-host-key-0001"
const host = fileURLToPath(new URL("../src/orders.ts", import.meta.url))

const children = new Set<ChildProcess>()
afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
})

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer()
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** The host on a free port (Waybill reads `PORT` too, and takes no 0), once it says where it listens. */
const startHost = async (databaseUrl: string) => {
  const port = await freePort()
  return new Promise<{ readonly child: ChildProcess; readonly base: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=@waybill/source", "--import", "tsx", host], {
      env: {
        ...process.env,
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        WAYBILL_SECRET_KEY: "0a".repeat(32),
        WAYBILL_API_KEYS: `acme:${key}`,
        WAYBILL_ALLOW_PRIVATE_TARGETS: "true",
        WAYBILL_LOG_LEVEL: "warn",
        // A killed host holds the outbox's lease until it expires: short here, so the restart takes over.
        WAYBILL_DELIVERY_TIMEOUT_MS: "1000",
        WAYBILL_DELIVERY_LEASE_MS: "6000"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.add(child)
    const output: Array<string> = []
    outputs.set(child, output)
    const collect = (chunk: Buffer) => {
      output.push(chunk.toString())
      const listening = /Listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output.join(""))
      if (listening !== null) resolve({ child, base: listening[1]! })
    }
    child.stdout!.on("data", collect)
    child.stderr!.on("data", collect)
    child.once("exit", (code) => reject(new Error(`the host exited (${code}) before listening:\n${output.join("")}`)))
  })
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  }).then(() => {
    // In a JSON run (\`WAYBILL_LOG_FORMAT=json npm test\`), Waybill's records are JSON; the
    // host's own line says where it listens.
    if (process.env.WAYBILL_LOG_FORMAT !== "json") return
    const bad = (outputs.get(child) ?? [])
      .join("")
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("Listening on") && !isJsonRecord(line))
    assert.deepStrictEqual(bad, [], "the host's lines that are not JSON records")
  })

const outputs = new WeakMap<ChildProcess, Array<string>>()

const isJsonRecord = (line: string) => {
  try {
    return typeof (JSON.parse(line) as { level?: unknown }).level === "string"
  } catch {
    return false
  }
}

const book = (base: string, customerId: string) =>
  fetch(`${base}/customers/${customerId}/orders`, { method: "POST" }).then(
    async (response) => ({ status: response.status, body: (await response.json()) as { id: string; eventId: string } }),
    () => undefined
  )

const until = async (check: () => Promise<boolean>, what: string) => {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for: ${what}`)
}

/** Whether some connection waits for a lock while running a statement that starts with `prefix`. */
const waitingOn = (observer: pg.Client, prefix: string) => async () => {
  const { rows } = await observer.query(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1",
    [`${prefix}%`]
  )
  return rows[0].n > 0
}

/** The orders and the orders the events name, each sorted. */
const ordersAndEvents = async (observer: pg.Client) => {
  const orders = await observer.query("SELECT id FROM public.orders ORDER BY id")
  const events = await observer.query(
    "SELECT (body::json -> 'payload' -> 'order' ->> 'id') AS id FROM waybill.events ORDER BY 1"
  )
  return {
    orders: orders.rows.map((row) => row.id as string),
    events: events.rows.map((row) => row.id as string)
  }
}

describe.skipIf(url === undefined || url === "")("examples/embed: the orders host killed mid-booking", () => {
  it.scopedLive(
    "SIGKILL before the event is written and after it, before COMMIT: no order without its event, no event without its order",
    () =>
      Effect.flatMap(Testing.freshPostgresDatabase(url!), (databaseUrl) =>
        Effect.promise(async () => {
          const observer = new pg.Client({ connectionString: databaseUrl })
          const holder = new pg.Client({ connectionString: databaseUrl })
          await observer.connect()
          await holder.connect()
          const received: Array<IncomingHttpHeaders> = []
          const receiver = createServer((req, res) => {
            received.push(req.headers)
            req.resume()
            req.on("end", () => res.end("ok"))
          })
          await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()))
          try {
            let running = await startHost(databaseUrl)
            const registered = await fetch(`${running.base}/waybill/webhooks`, {
              method: "POST",
              headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
              body: JSON.stringify({
                url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
                events: ["order-created"],
                auth: { type: "bearer", token: "receiver-token-0001" }
              })
            })
            assert.strictEqual(registered.status, 201)

            // Books while `hold` keeps the booking waiting on a statement starting with `prefix`,
            // then kills the host there: the booking's request never gets an answer.
            const killWhileHeld = async (customerId: string, hold: string, prefix: string) => {
              await holder.query("BEGIN")
              await holder.query(hold)
              const booking = book(running.base, customerId)
              await until(waitingOn(observer, prefix), `the booking to wait on ${prefix}`)
              await killed(running.child)
              await holder.query("ROLLBACK")
              assert.isUndefined(await booking)
            }
            // 1. Held before the event is written: the host's INSERT into Waybill's outbox waits.
            await killWhileHeld("before-event", "LOCK TABLE waybill.events IN SHARE ROW EXCLUSIVE MODE", "WITH")
            // 2. Held after the event is written, before COMMIT: the customer's counter waits.
            running = await startHost(databaseUrl)
            await observer.query("INSERT INTO customers (id) VALUES ('after-event')")
            await killWhileHeld(
              "after-event",
              "SELECT 1 FROM customers WHERE id = 'after-event' FOR NO KEY UPDATE",
              "UPDATE customers"
            )

            // The killed hosts' connections end, their transactions without COMMIT.
            const holderPid = (await holder.query("SELECT pg_backend_pid() AS pid")).rows[0].pid
            await until(async () => {
              const { rows } = await observer.query(
                "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid NOT IN (pg_backend_pid(), $1)",
                [holderPid]
              )
              return rows[0].n === 0
            }, "the killed hosts' connections to end")
            assert.deepStrictEqual(await ordersAndEvents(observer), { orders: [], events: [] })

            // 3. Restarted, a booking commits both; the webhook gets that event only, once.
            running = await startHost(databaseUrl)
            const third = await book(running.base, "committed")
            assert.strictEqual(third?.status, 201)
            const { orders, events } = await ordersAndEvents(observer)
            assert.deepStrictEqual(orders, [third!.body.id])
            assert.deepStrictEqual(events, orders)
            await until(async () => received.length >= 1, "the committed order's event")
            await new Promise((resolve) => setTimeout(resolve, 500))
            assert.deepStrictEqual(
              received.map((headers) => headers["x-event-id"]),
              [third!.body.eventId]
            )
            await killed(running.child)
          } finally {
            receiver.close()
            await observer.end()
            await holder.end()
          }
        })
      ),
    120_000
  )
})
