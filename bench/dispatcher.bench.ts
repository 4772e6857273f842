/**
 * The dispatcher's own cost: events recorded in the outbox → fanned out → delivered
 * over real HTTP (the Node `WebhookSender`, HMAC-signed) → recorded, on the in-memory ports, to a
 * loopback receiver in this process that answers 200 at once; beside a bare keep-alive HTTP
 * client loop posting the same bodies with the same headers to the same receiver with the same
 * number of requests in flight (the ceiling). No database here: this isolates what fan-out, claims, signing, the
 * sender and batched completions cost; the end-to-end benchmark on PostgreSQL is the reference
 * server's.
 *
 * A second bare loop posts the same way over a bare undici `Agent`, the client the sender is built
 * on: the dispatcher's ratio to it is what the dispatcher and the sender add to their
 * client.
 *
 * Reported: deliveries/s for rounds of 3,000 events published at once (the contenders take
 * turns, round by round, as the shared machine's load swings), and the latency from publish to
 * receipt (p50/p99) while events are published at a steady 1,000/s.
 *
 * The dispatcher runs with Effect's tracer off, as the reference server runs it unless an OTLP
 * endpoint is set (with it on, every attempt and fan-out is a span); `BENCH_TRACER=on` measures it
 * with the tracer on.
 *
 * Target: the median per-round ratio dispatcher / bare loop ≥ 0.6, the engine's cost bound:
 * what the engine, the signing and the sender may add to a bare client's work. (The machine is
 * shared: compare only ratios taken in the same run; the ratio also moves with the host,
 * docs/benchmarks.md.)
 */
import * as http from "node:http"
import * as Effect from "effect/Effect"
import { Agent, type Dispatcher as UndiciDispatcher } from "undici"
import {
  arrivals,
  IN_FLIGHT,
  port,
  startDispatcher,
  succeededSoFar,
  tour,
  untilSucceeded,
  url,
  workspace
} from "./dispatcher-setup.js"
import { type Measurement, median, quantileOf, report, target } from "./harness.js"

const ROUND = 3_000
const ROUNDS = 7
const PACED_RATE = 1_000
const PACED_SECONDS = 3

const sampleBody = JSON.stringify({
  id: "evt_01jbenchbenchbenchbenchbe",
  type: "tour-created",
  createdAt: 1_798_000_000,
  payload: tour(1)
})

// The ceiling: IN_FLIGHT workers posting the same body with the same header set (a fixed
// signature: no signing) over kept-alive connections, so both contenders put the same bytes on
// the wire and the ratio shows what the dispatcher adds.
const bareHeaders = {
  "Content-Type": "application/json",
  "X-Delivery-Id": "dlv_01jbenchbenchbenchbenchbe",
  "X-Event-Id": "evt_01jbenchbenchbenchbenchbe",
  "X-Event-Type": "tour-created",
  "X-Delivery-Attempt": "1",
  "X-Signature-Algorithm": "hmac-sha256",
  "X-Signature-Timestamp": "1798000000",
  "X-Signature": "0".repeat(64),
  "Content-Length": String(Buffer.byteLength(sampleBody))
}
const bareAgent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT })
const post = () =>
  new Promise<void>((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: "POST",
        agent: bareAgent,
        headers: bareHeaders
      },
      (response) => {
        response.resume()
        response.on("end", resolve)
      }
    )
    request.on("error", reject)
    request.end(sampleBody)
  })
// The same over a bare undici Agent, as the sender uses it (`dispatch`, one request at a time per
// connection), the body read and dropped.
const { "Content-Length": _, ...undiciHeaders } = bareHeaders
const undiciAgent = new Agent({ connections: IN_FLIGHT, pipelining: 1 })
const undiciRequest: UndiciDispatcher.DispatchOptions = {
  origin: `http://127.0.0.1:${port}`,
  path: "/hook",
  method: "POST",
  headers: undiciHeaders,
  body: sampleBody
}
const undiciPost = () =>
  new Promise<void>((resolve, reject) => {
    undiciAgent.dispatch(undiciRequest, {
      // undici takes a handler as one of this API only with `onRequestStart`. Methods, not arrow
      // properties: tsx names each arrow property per call (`keepNames`), a cost the loop would pay.
      onRequestStart() {},
      onResponseEnd() {
        resolve()
      },
      onResponseError(_controller, error) {
        reject(error)
      }
    })
  })
// This process's CPU time (user and system, µs) spent while `run` ran: steadier than a rate on a
// shared machine, since time spent waiting for a core is not counted.
const cpuOf = async <A>(run: () => Promise<A>): Promise<{ readonly value: A; readonly micros: number }> => {
  const before = process.cpuUsage()
  const value = await run()
  const used = process.cpuUsage(before)
  return { value, micros: used.user + used.system }
}

const bareRound = async (count: number, post: () => Promise<void>): Promise<number> => {
  let left = count
  const start = performance.now()
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left > 0) {
        left--
        await post()
      }
    })
  )
  return (count / (performance.now() - start)) * 1000
}

const { runtime, outbox, dispatcher, deliver, stop } = await startDispatcher()

// Events recorded at once, then fanned out, delivered and recorded: deliveries per second.
const dispatchRound = (count: number) =>
  runtime.runPromise(
    Effect.gen(function* () {
      const start = performance.now()
      yield* deliver(count)
      return (count / (performance.now() - start)) * 1000
    })
  )

// Warm-up, then rounds taking turns, so every contender sees the same machine load.
await bareRound(ROUND, post)
await bareRound(ROUND, undiciPost)
await dispatchRound(ROUND)
const bareRates: Array<number> = []
const undiciRates: Array<number> = []
const dispatchRates: Array<number> = []
const ratios: Array<number> = []
const undiciRatios: Array<number> = []
const bareCpu: Array<number> = []
const dispatchCpu: Array<number> = []
for (let round = 0; round < ROUNDS; round++) {
  const { value: bare, micros: bareMicros } = await cpuOf(() => bareRound(ROUND, post))
  const bareUndici = await bareRound(ROUND, undiciPost)
  const { value: dispatched, micros: dispatchMicros } = await cpuOf(() => dispatchRound(ROUND))
  bareCpu.push(bareMicros / ROUND)
  dispatchCpu.push(dispatchMicros / ROUND)
  bareRates.push(bare)
  undiciRates.push(bareUndici)
  dispatchRates.push(dispatched)
  ratios.push(dispatched / bare)
  undiciRatios.push(dispatched / bareUndici)
}

// Paced: PACED_RATE events per second, in slices of 10 ms; latency from publish to receipt.
const latencies = await runtime.runPromise(
  Effect.gen(function* () {
    const published = new Map<string, number>()
    const start = performance.now()
    const before = succeededSoFar()
    let sent = 0
    while (performance.now() - start < PACED_SECONDS * 1000) {
      const due = Math.floor(((performance.now() - start) / 1000) * PACED_RATE)
      if (due > sent) {
        const at = performance.now()
        const recorded = yield* outbox.publish(
          workspace,
          Array.from({ length: due - sent }, (_, i) => ({ type: "tour-created" as const, payload: tour(sent + i) }))
        )
        for (const event of recorded) published.set(event.id, at)
        sent = due
        yield* dispatcher.wake
      }
      yield* Effect.sleep("10 millis")
    }
    yield* untilSucceeded(before + sent)
    return [...published].map(([id, at]) => (arrivals.get(id) ?? Number.NaN) - at).sort((a, b) => a - b)
  })
)
await stop()
bareAgent.destroy()
await undiciAgent.destroy()

const rows: Array<Measurement> = [
  { name: "bare HTTP loop", opsPerSecond: median(bareRates) },
  { name: "bare undici loop", opsPerSecond: median(undiciRates) },
  { name: "dispatcher (memory ports)", opsPerSecond: median(dispatchRates) }
]
report(
  `Webhook deliveries to a loopback receiver, ${IN_FLIGHT} in flight (median of ${ROUNDS} rounds of ${ROUND})`,
  rows,
  "bare HTTP loop",
  "deliveries/s"
)
console.log(
  `  latency publish → receipt at ${PACED_RATE}/s for ${PACED_SECONDS} s: p50 ${quantileOf(latencies, 0.5).toFixed(1)} ms, p99 ${quantileOf(latencies, 0.99).toFixed(1)} ms (${latencies.length} events)`
)
console.log(
  `  dispatcher / bare undici loop (median of per-round ratios): ${median(undiciRatios).toFixed(2)} (rounds: ${undiciRatios.map((ratio) => ratio.toFixed(2)).join(", ")})`
)
console.log(
  `  CPU per delivery (this process, receiver included; median of rounds): dispatcher ${median(dispatchCpu).toFixed(1)} µs, bare HTTP loop ${median(bareCpu).toFixed(1)} µs (rounds: ${dispatchCpu.map((micros) => micros.toFixed(1)).join(", ")})`
)
const ok = target("dispatcher / bare loop (median of per-round ratios)", median(ratios), 0.6)
process.exit(ok ? 0 : 1)
