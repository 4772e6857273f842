/**
 * The database goes away and comes back (contract §1 503 `unavailable`, §7 readiness): a
 * reference server on a PostgreSQL cluster of the test's own, which the test stops for a while
 * and starts again. While it is down: liveness stays 200, readiness and every request that
 * needs the database answer 503 with the error body and `Retry-After`, promptly. Once it is back
 * the server recovers by itself: ready again, requests accepted, and every event that got its
 * 202 (before the outage or after it) is delivered.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ReferenceDataFile from "@waybill/server/ReferenceDataFile"
import * as Server from "@waybill/server/Server"
import { Cause, Effect, Fiber, Layer, Redacted } from "effect"
import { contractMaster } from "./fixtures.js"
import { keys, testConfig, testLog } from "./harness.js"
import { report } from "./json-logs.js"
import { canRunCluster, cluster } from "./postgres-cluster.js"
import { eventually, receiver } from "./receivers.js"
import { logEntries, processKey, serverProcess } from "./server-process.js"

// The servers' log, shown after a test that failed.
const log = testLog("the servers")
log.showOnFailure()

const request = (
  base: string,
  path: string,
  init: { method?: string; json?: unknown; key?: string | false; timeoutMs?: number } = {}
) =>
  Effect.promise(async () => {
    const started = Date.now()
    const response = await fetch(`${base}${path}`, {
      method: init.method ?? (init.json === undefined ? "GET" : "POST"),
      headers: {
        ...(init.key === false ? {} : { authorization: `Bearer ${init.key ?? keys.a}` }),
        ...(init.json === undefined ? {} : { "content-type": "application/json" })
      },
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
      // A client's patience: an answer must come before it gives up.
      signal: AbortSignal.timeout(init.timeoutMs ?? 10_000)
    })
    const text = await response.text()
    return {
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      body: text === "" ? undefined : JSON.parse(text),
      ms: Date.now() - started
    }
  })

const tourCreated = (id: string) => ({
  type: "tour-created",
  payload: { tour: { id, status: "planned", substatus: null, properties: {} } }
})

describe.skipIf(canRunCluster)("database outage", () => {
  it.skip("NOT RUN: no PostgreSQL server binaries to run a cluster of the test's own", () => {})
})

describe.runIf(canRunCluster)("database outage", () => {
  it.live(
    "503 unavailable with Retry-After while PostgreSQL is down; by itself ready again after; every 202 delivered",
    () =>
      Effect.gen(function* () {
        const database = yield* cluster
        const referenceData = yield* ReferenceDataFile.load(ReferenceDataFile.defaultPath)
        const config = testConfig({ _tag: "Postgres", url: Redacted.make(database.url), maxConnections: 4 })
        const base = yield* Effect.flatMap(
          Layer.build(Server.layer(config, referenceData).pipe(Layer.provide(log.layer))),
          (context) => Effect.provide(Server.baseUrl, context)
        )
        const target = yield* receiver()
        const registered = yield* request(base, "/webhooks", {
          json: { url: target.url, events: ["tour-created"], auth: { type: "bearer", token: "outage-token" } }
        })
        assert.strictEqual(registered.status, 201)
        const accepted: Array<string> = []
        const publish = (id: string) =>
          Effect.tap(request(base, "/events", { json: tourCreated(id) }), (reply) =>
            Effect.sync(() => {
              if (reply.status === 202) accepted.push(reply.body.id)
            })
          )
        for (let i = 0; i < 10; i++) assert.strictEqual((yield* publish(`tour_before_${i}`)).status, 202)

        yield* database.stop
        const live = yield* request(base, "/health", { key: false })
        assert.strictEqual(live.status, 200)
        const ready = yield* request(base, "/health/ready", { key: false })
        assert.strictEqual(ready.status, 503)
        assert.strictEqual(ready.retryAfter, "5")
        assert.strictEqual(ready.body.code, "unavailable")
        for (const reply of [
          yield* publish("tour_during"),
          yield* request(base, "/webhooks"),
          yield* request(base, "/drafts", {
            json: { origin: "manual", status: "draft", transportShapeId: "shape_line" }
          })
        ]) {
          assert.strictEqual(reply.status, 503, JSON.stringify(reply.body))
          assert.strictEqual(reply.retryAfter, "5")
          assert.deepStrictEqual(Object.keys(reply.body).sort(), ["code", "issues", "message"])
          assert.strictEqual(reply.body.code, "unavailable")
          assert.notMatch(reply.body.message, /ECONNREFUSED|127\\.0\\.0\\.1|postgres/i)
        }

        yield* database.start
        const back = Date.now()
        yield* eventually(
          Effect.map(request(base, "/health/ready", { key: false }), (reply) => reply.status === 200),
          "readiness after the database is back",
          30_000
        )
        const recovered = Date.now() - back
        yield* eventually(
          Effect.map(publish("tour_after"), (reply) => reply.status === 202),
          "an event accepted after the database is back",
          30_000
        )
        yield* eventually(
          Effect.sync(() => accepted.every((id) => target.for(id).length >= 1)),
          "every accepted event delivered",
          60_000
        )
        assert.strictEqual(accepted.length, 11)
        report(`database outage: ready again ${recovered} ms after PostgreSQL was started`)
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )
})

/**
 * The continuous variant: a server process (its log captured) on the test's own cluster, events
 * published without a pause by four clients, PostgreSQL restarted once and then stopped for 10 s.
 * Every publisher gets 202 or 503 `unavailable` (with the body and `Retry-After`) within its
 * 10-s patience; liveness stays 200 while readiness says 503; every 202 is delivered; the
 * dispatcher and the generator resume (a recurring master whose `endsAt` passed during the
 * outage is ended by the generator afterwards); the log reports each kind of trouble a bounded
 * number of times, whatever the number of refused requests.
 */
describe.runIf(canRunCluster)("database outage under continuous publishing", () => {
  it.live(
    "PostgreSQL restarted, then down for 10 s, while four clients publish: 202 or 503 each, every 202 delivered, loops resumed, a quiet log",
    () =>
      Effect.gen(function* () {
        const database = yield* cluster
        const server = yield* serverProcess(database.url, {
          captureOutput: true,
          // In JSON, so that the outage's records are seen to parse, each on one line.
          env: {
            WAYBILL_GENERATOR_INTERVAL_MS: "1000",
            WAYBILL_CLOCK_START: "2027-01-01T05:59:30Z",
            WAYBILL_LOG_FORMAT: "json"
          }
        })
        const base = server.base
        const key = processKey
        const target = yield* receiver()
        const registered = yield* request(base, "/webhooks", {
          key,
          json: {
            url: target.url,
            events: ["tour-created", "transport-draft-recurring-ended"],
            auth: { type: "bearer", token: "outage-token" }
          }
        })
        assert.strictEqual(registered.status, 201)

        // A recurring master whose window ends during the coming outage, so that only the
        // generator's loop can end it, and only after the outage. The server's clock started at
        // 05:59:30 (WAYBILL_CLOCK_START): its daily 06:00 UTC tour is generated at activation,
        // and its window ends at 06:00:01.
        const endsAt = Date.parse("2027-01-01T06:00:01Z") / 1000
        const { startsAt: _, ...schedule } = contractMaster().recurringSchedule
        const master = yield* request(base, "/drafts", {
          key,
          json: {
            ...contractMaster(),
            recurringSchedule: { ...schedule, cronExpressions: ["0 6 * * *"], timezone: "UTC", endsAt }
          }
        })
        assert.strictEqual(master.status, 201, JSON.stringify(master.body))
        // The server's clock minus ours, to a second.
        const skew = master.body.createdAt * 1000 - Date.now()
        const serverNow = () => (Date.now() + skew) / 1000
        const activated = yield* request(base, `/drafts/${master.body.id}/actions`, {
          key,
          json: { type: "activate-recurring" }
        })
        assert.strictEqual(activated.status, 200, JSON.stringify(activated.body))

        // Liveness and readiness, every 100 ms.
        const probes: Array<{ at: number; live: number; ready: number }> = []
        let running = true
        yield* Effect.forkScoped(
          Effect.gen(function* () {
            while (running) {
              const [live, ready] = yield* Effect.all(
                [request(base, "/health", { key: false }), request(base, "/health/ready", { key: false })],
                { concurrency: 2 }
              )
              probes.push({ at: Date.now(), live: live.status, ready: ready.status })
              yield* Effect.sleep("100 millis")
            }
          })
        )

        // Four publishers, each at most one request at a time, with a 10-s patience.
        const accepted: Array<{ id: string; at: number }> = []
        const refused: Array<number> = []
        const wrong: Array<string> = []
        let sequence = 0
        const publisher = Effect.gen(function* () {
          while (running) {
            const exit = yield* Effect.exit(request(base, "/events", { key, json: tourCreated(`tour_c${sequence++}`) }))
            if (exit._tag === "Failure") {
              wrong.push(`no answer: ${String(Cause.squash(exit.cause))}`)
              continue
            }
            const reply = exit.value
            if (reply.status === 202) accepted.push({ id: reply.body.id, at: Date.now() })
            else if (
              reply.status === 503 &&
              reply.retryAfter === "5" &&
              reply.body?.code === "unavailable" &&
              Object.keys(reply.body).sort().join(",") === "code,issues,message"
            ) {
              refused.push(Date.now())
            } else wrong.push(`${reply.status} ${reply.retryAfter} ${JSON.stringify(reply.body)}`)
            yield* Effect.sleep(reply.status === 202 ? "25 millis" : "50 millis")
          }
        })
        const publishers = yield* Effect.forkScoped(
          Effect.all(
            Array.from({ length: 4 }, () => publisher),
            { concurrency: 4 }
          )
        )

        // Ready again: the first 200 of /health/ready after `since`, as the probes saw it.
        const readyAgain = (since: number) =>
          Effect.gen(function* () {
            yield* eventually(
              Effect.sync(() => probes.some((probe) => probe.at > since && probe.ready === 200)),
              "readiness after the database is back",
              30_000
            )
            return probes.find((probe) => probe.at > since && probe.ready === 200)!.at - since
          })

        yield* Effect.sleep("2 seconds")
        // A restart: stopped (open connections cut) and started at once.
        yield* database.stop
        yield* database.start
        const restarted = Date.now()
        const afterRestart = yield* readyAgain(restarted)
        yield* Effect.sleep("2 seconds")

        // Publishing goes on until the window is about to end.
        yield* Effect.sleep(Math.max(0, (endsAt - 5 - serverNow()) * 1000))
        assert.strictEqual((yield* request(base, `/drafts/${master.body.id}`, { key })).body.status, "active-recurring")
        assert.isBelow(serverNow(), endsAt - 1, "the window still open when the database stops")

        // Down for 10 s.
        const logBefore = server.output.length
        yield* database.stop
        const stopped = Date.now()
        yield* Effect.sleep("10 seconds")
        const refusedWhileDown = refused.filter((at) => at > stopped).length
        const probesWhileDown = probes.filter((probe) => probe.at > stopped + 500)
        assert.isAbove(serverNow(), endsAt + 1, "the window ended while the database was down")
        yield* database.start
        const started = Date.now()
        const afterOutage = yield* readyAgain(started)
        yield* eventually(
          Effect.sync(() => accepted.some((event) => event.at > started)),
          "an event accepted after the database is back",
          30_000
        )
        const firstAccepted = accepted.find((event) => event.at > started)!.at - started
        yield* Effect.sleep("3 seconds")
        running = false
        yield* Fiber.join(publishers)

        // Every 202 delivered; the generator ended the master after the outage.
        yield* eventually(
          Effect.sync(() => accepted.every((event) => target.for(event.id).length >= 1)),
          "every accepted event delivered",
          60_000
        )
        yield* eventually(
          Effect.map(
            request(base, `/drafts/${master.body.id}`, { key }),
            (reply) => reply.body.status === "ended-recurring"
          ),
          "the generator to end the master after the outage",
          30_000
        )
        const ended = target.received.filter(
          (received) => JSON.parse(received.body).type === "transport-draft-recurring-ended"
        )
        assert.strictEqual(ended.length, 1)
        assert.isAbove(ended[0]!.arrivedAt, started)

        // OUTAGE_LOG=1 prints the server's whole log (to see what an operator would).
        if (process.env.OUTAGE_LOG) console.log(server.output.join("\n"))
        // What the log says from the 10-s stop on: warnings and errors, and the returns.
        const log = logEntries(server.output.slice(logBefore)).filter(
          (entry) => entry.level !== "INFO" || /back|again/.test(entry.message)
        )
        const kinds = new Map<string, number>()
        for (const entry of log) {
          const kind = `${entry.level} ${entry.message}`
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
        }
        report(
          [
            `continuous outage: ${accepted.length} events accepted (all delivered), ${refused.length} publications refused 503 (${refusedWhileDown} in the 10 s down), ${wrong.length} other answers`,
            `  ready again ${afterRestart} ms after the restart, ${afterOutage} ms after the 10-s stop ended; first 202 after it at ${firstAccepted} ms`,
            `  log from the 10-s stop on (warnings, errors, returns): ${log.length} entries`,
            ...[...kinds].map(([kind, count]) => `    ${count} × ${kind}`)
          ].join("\n")
        )
        assert.deepStrictEqual(wrong, [], "every publication answered 202 or 503 unavailable in time")
        assert.isAbove(refusedWhileDown, 40)
        assert.isAbove(probesWhileDown.length, 10)
        for (const probe of probesWhileDown) {
          assert.strictEqual(probe.live, 200, "liveness while down")
          assert.strictEqual(probe.ready, 503, "readiness while down")
        }
        // Said once by each part that met the outage (the requests, each loop, the notifications),
        // not once per request or per turn of a loop; and said when it is over.
        for (const [kind, count] of kinds) assert.strictEqual(count, 1, `logged ${count} times: ${kind}`)
        const said = (pattern: RegExp) => log.some((entry) => pattern.test(entry.message))
        for (const loop of ["the dispatcher's delivery loop", "the tour generator"]) {
          assert.isTrue(said(new RegExp(`cannot be reached: ${loop} waits`)), `${loop}: the outage`)
          assert.isTrue(said(new RegExp(`is back: ${loop} runs again`)), `${loop}: the return`)
        }
        assert.isTrue(said(/requests are answered 503 unavailable until it is back/), "the refused requests")
        assert.isTrue(said(/^Event notifications lost/), "notifications lost")
        assert.isTrue(said(/^Event notifications are back/), "notifications back")
        const lines = server.output.filter((line) => line !== "")
        assert.deepStrictEqual(
          lines.filter((line) => !line.startsWith("{") || logEntries([line]).length !== 1),
          [],
          "every line a JSON record"
        )
      }).pipe(Effect.scoped),
    { timeout: 180_000 }
  )
})
