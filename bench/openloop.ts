/**
 * The latency benchmark's instruments: a webhook receiver on loopback that answers at
 * once and notes when each event arrived, an open-loop publisher that sends `POST /events` on a
 * fixed schedule whatever the answers, and the readings of a process's CPU and memory.
 *
 * Each event carries its number in the payload (`tour.id = "lat-<n>"`), so the receiver, in the
 * same process and on the same clock as the publisher, matches an arrival to the moment its
 * event was sent: publish→receipt is `received − sent`, `performance.now()` on both sides.
 *
 * Waybill's event ids start with the epoch millisecond of the batch that records them
 * (`@waybill/core/Id`), so an arrival's `X-Event-Id` splits the way in two, read from outside to
 * the millisecond (`stages`). Delivery ids are derived from their event's, so they add nothing.
 */

import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import type { Pool } from "undici"

/** The arrivals and sending times of one run, indexed by the event's number in the run. */
export interface Run {
  readonly first: number
  readonly count: number
  readonly sentAt: Float64Array
  readonly receivedAt: Float64Array
  readonly accepted: Uint8Array
  /** Epoch milliseconds in the arrival's `X-Event-Id` (NaN without one). */
  readonly eventIdAt: Float64Array
  duplicates: number
}

const newRun = (first: number, count: number): Run => ({
  first,
  count,
  sentAt: new Float64Array(count).fill(Number.NaN),
  receivedAt: new Float64Array(count).fill(Number.NaN),
  accepted: new Uint8Array(count),
  eventIdAt: new Float64Array(count).fill(Number.NaN),
  duplicates: 0
})

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"

// The epoch milliseconds a Waybill id starts with (10 base-32 characters after `xxx_`); NaN for
// any other header.
const idMillis = (header: string | Array<string> | undefined): number => {
  const match = typeof header === "string" ? /^[a-z]+_([0-9a-hjkmnp-tv-z]{10})/.exec(header) : null
  if (match === null) return Number.NaN
  let millis = 0
  for (const char of match[1]!) millis = millis * 32 + ALPHABET.indexOf(char)
  return millis
}

const marker = /"lat-(\d+)"/

/** Starts the receiver; `url` is its webhook URL, `track` makes a run the one arrivals go to. */
export const startReceiver = async () => {
  let current: Run | undefined
  let strays = 0
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const at = performance.now()
      res.writeHead(200).end()
      const match = marker.exec(Buffer.concat(chunks).toString("utf8"))
      const index = match === null || current === undefined ? -1 : Number(match[1]) - current.first
      if (current === undefined || index < 0 || index >= current.count) {
        strays++
        return
      }
      if (Number.isNaN(current.receivedAt[index]!)) {
        current.receivedAt[index] = at
        current.eventIdAt[index] = idMillis(req.headers["x-event-id"])
      } else current.duplicates++
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    track: (run: Run) => {
      current = run
    },
    /** Arrivals that belonged to no run being tracked (a run's late ones, or another's). */
    strays: () => strays,
    close: () => {
      server.close()
      server.closeAllConnections()
    }
  }
}

/** What the publisher saw of one run. */
export interface Published {
  readonly run: Run
  /** Seconds from the first send to the last. */
  readonly sendingSeconds: number
  /** How late each send was against its schedule (ms), sorted. */
  readonly lag: Float64Array
  /** `POST /events` answer times (ms) of the accepted ones, sorted. */
  readonly answers: Float64Array
  readonly refused: number
  readonly failed: number
}

let nextNumber = 1

/**
 * Sends `rate × seconds` events (`POST /events`) at `rate` per second on a timer that catches up
 * (never waiting for an answer), through `pool` (an undici Pool kept for the contender, so that
 * its connections are open and warm from one run to the next), and resolves once
 * every answer is in. `onStart` runs as the first event goes out.
 */
export const publish = async (options: {
  readonly apiKey: string
  readonly rate: number
  readonly seconds: number
  readonly pool: Pool
  readonly receiver: { readonly track: (run: Run) => void }
  readonly onStart?: () => void
}): Promise<Published> => {
  const count = Math.max(1, Math.round(options.rate * options.seconds))
  const run = newRun(nextNumber, count)
  nextNumber += count
  options.receiver.track(run)
  const pool = options.pool
  const headers = { authorization: `Bearer ${options.apiKey}`, "content-type": "application/json" }
  const lag = new Float64Array(count)
  const answerTimes = new Float64Array(count).fill(Number.NaN)
  let refused = 0
  let failed = 0
  let open = 0
  let sent = 0
  const interval = 1000 / options.rate
  let start = 0
  let lastSend = 0
  await new Promise<void>((resolve) => {
    const settle = () => {
      open--
      if (open === 0 && sent === count) resolve()
    }
    const fire = (i: number) => {
      const body = JSON.stringify({
        type: "tour-created",
        payload: { tour: { id: `lat-${run.first + i}`, status: "planned", substatus: null, properties: {} } }
      })
      const at = performance.now()
      run.sentAt[i] = at
      open++
      pool.request({ path: "/events", method: "POST", headers, body }).then(
        async (response) => {
          await response.body.dump()
          if (response.statusCode === 202) {
            run.accepted[i] = 1
            answerTimes[i] = performance.now() - at
          } else refused++
          settle()
        },
        () => {
          failed++
          settle()
        }
      )
    }
    const tick = () => {
      const now = performance.now()
      const due = Math.min(count, Math.floor((now - start) / interval) + 1)
      while (sent < due) {
        lag[sent] = performance.now() - (start + sent * interval)
        fire(sent++)
      }
      lastSend = performance.now()
      if (sent < count) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()))
    }
    options.onStart?.()
    start = performance.now()
    tick()
  })
  return {
    run,
    sendingSeconds: Math.max((lastSend - start) / 1000, interval / 1000),
    lag: lag.sort(),
    answers: answerTimes.filter((t) => !Number.isNaN(t)).sort(),
    refused,
    failed
  }
}

/** Counts the accepted events of a run that have arrived. */
export const delivered = (run: Run): number => {
  let arrived = 0
  for (let i = 0; i < run.count; i++) if (run.accepted[i] === 1 && !Number.isNaN(run.receivedAt[i]!)) arrived++
  return arrived
}

/** Counts the accepted events of a run. */
export const accepted = (run: Run): number => run.accepted.reduce((sum, a) => sum + a, 0)

/** Publish→receipt times (ms) of the accepted events that arrived, sorted. */
export const latencies = (run: Run): Float64Array => {
  const values: Array<number> = []
  for (let i = 0; i < run.count; i++) {
    if (run.accepted[i] === 1 && !Number.isNaN(run.receivedAt[i]!)) values.push(run.receivedAt[i]! - run.sentAt[i]!)
  }
  return Float64Array.from(values).sort()
}

/**
 * The two stages of the way (ms, each sorted), where the arrivals carried Waybill's event ids:
 * publish to the event's id (the request, its checks and the wait for the batch that records
 * it), and the event's id to receipt (the batch's commit, the notification, fan-out, the
 * delivery's commit, the claim, the POST). Ids hold whole milliseconds.
 */
export const stages = (run: Run) => {
  const recorded: Array<number> = []
  const delivered: Array<number> = []
  for (let i = 0; i < run.count; i++) {
    if (Number.isNaN(run.eventIdAt[i]!)) continue
    recorded.push(run.eventIdAt[i]! - (performance.timeOrigin + run.sentAt[i]!))
    delivered.push(performance.timeOrigin + run.receivedAt[i]! - run.eventIdAt[i]!)
  }
  return { recorded: Float64Array.from(recorded).sort(), delivered: Float64Array.from(delivered).sort() }
}

/** A process's resident set (VmRSS, bytes) from /proc (Linux); NaN where unreadable. */
export const residentBytes = (pid: number): number => {
  try {
    const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return line === null ? Number.NaN : Number(line[1]) * 1024
  } catch {
    return Number.NaN
  }
}

/** Samples `pid`'s VmRSS every 200 ms until `stop`, which returns the largest seen. */
export const watchResident = (pid: number) => {
  let largest = residentBytes(pid)
  const timer = setInterval(() => {
    largest = Math.max(largest, residentBytes(pid))
  }, 200)
  return () => {
    clearInterval(timer)
    return Math.max(largest, residentBytes(pid))
  }
}
