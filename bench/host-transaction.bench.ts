/**
 * What publishing in a host's own transaction costs the host (`HostTransaction.publishIn`,
 * contract §9), on PostgreSQL: one node-postgres `Client`, `search_path` public, runs its
 * transactions one after another, `BEGIN; INSERT INTO public.orders …; COMMIT`, in four ways:
 *
 * - *order*: that alone;
 * - *order + own outbox row*: one more `INSERT` of the same event body into a table of the host's,
 *   what one more statement costs (a hand-written outbox without notification);
 * - *order + its statement, raw*: publishIn's statement and values (one publish's, a fresh id each
 *   time) sent as they are: the SQL's cost without Waybill's checks and envelope;
 * - *order + publishIn*: the event published in the transaction, Waybill's one statement (the row
 *   and its `pg_notify`).
 *
 * A connection listens on the channel throughout, as a Waybill process does (in this process).
 *
 * Contenders take turns (`BENCH_ROUNDS`, 6, of `BENCH_SECONDS`, 2 s each, the order flipped every
 * round); reported: transactions per second, p50/p99, the CPU per transaction of the host's process
 * (this one: its driver, and Waybill's checks for publishIn) and of PostgreSQL, the round trips of
 * each transaction (counted at the executor), and the medians of per-round ratios.
 * Bound: publishIn adds at most one round trip. The ratios are figures; compare only ratios from
 * one run. Without `DATABASE_URL` the benchmark says so and is skipped.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as HostTransaction from "@waybill/store-pg/HostTransaction"
import * as Migrations from "@waybill/store-pg/Migrations"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import pg from "pg"
import { figure, median } from "./harness.js"
import { freshDatabase, postgresCpuSeconds } from "./server.js"

if (process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === "") {
  console.log("  skipped: DATABASE_URL is not set (a PostgreSQL server where a throw-away database is made)")
  process.exit(0)
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2)
const options = { schema: Migrations.defaultSchema, workspaceId: Schema.decodeSync(WorkspaceId)("bench-host") }

const database = await freshDatabase()
try {
  await Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(PgClient.make({ url: Redacted.make(database.url), maxConnections: 1 }), (sql) =>
        Migrations.run.pipe(Effect.provideService(SqlClient.SqlClient, sql))
      )
    ).pipe(Effect.provide(Reactivity.layer))
  )
  const connect = async () => {
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    return client
  }
  const host = await connect()
  await host.query("SET search_path TO public")
  await host.query("CREATE TABLE orders (id bigserial PRIMARY KEY, reference text NOT NULL, amount integer NOT NULL)")
  await host.query("CREATE TABLE order_outbox (id bigserial PRIMARY KEY, body text NOT NULL)")
  // A Waybill process listens on the channel: every commit with an event notifies it.
  const listener = await connect()
  let notified = 0
  listener.on("notification", () => notified++)
  await listener.query(`LISTEN ${Migrations.defaultSchema}_events`)

  // Every statement goes through here, so a transaction's round trips are counted where they start.
  let roundTrips = 0
  const executor: HostTransaction.Executor = {
    query: (text, values) => {
      roundTrips++
      return host.query(text, values)
    }
  }
  const event = (i: number) => ({
    type: "tour-created",
    payload: {
      tour: { id: `tour_${i}`, status: "planned", substatus: null, properties: { prop_region: "opt_north" } }
    },
    orderingKey: `tour_${i}`
  })
  const order = (i: number) =>
    executor.query("INSERT INTO orders (reference, amount) VALUES ($1, $2)", [`order-${i}`, i])
  // publishIn's own statement and values, sent as they are: what the SQL costs without Waybill's
  // checks and envelope (the values of one publish, with a fresh id each time).
  const sent: { text: string; values: Array<unknown> } = { text: "", values: [] }
  await host.query("BEGIN")
  await Effect.runPromise(
    HostTransaction.publishIn(
      {
        query: (text, values) => {
          Object.assign(sent, { text, values })
          return host.query(text, values)
        }
      },
      options,
      event(-1)
    )
  )
  await host.query("ROLLBACK")
  const transaction = async (work: () => PromiseLike<unknown>) => {
    await executor.query("BEGIN", [])
    await work()
    await executor.query("COMMIT", [])
  }
  const contenders: Record<string, (i: number) => Promise<void>> = {
    order: (i) => transaction(() => order(i)),
    "order + own outbox row": (i) =>
      transaction(async () => {
        await order(i)
        await executor.query("INSERT INTO order_outbox (body) VALUES ($1)", [JSON.stringify(event(i))])
      }),
    "order + its statement, raw": (i) =>
      transaction(async () => {
        await order(i)
        await executor.query(sent.text, [`evt_raw_${i}`, ...sent.values.slice(1)])
      }),
    "order + publishIn": (i) =>
      transaction(async () => {
        await order(i)
        await Effect.runPromise(HostTransaction.publishIn(executor, options, event(i)))
      })
  }
  const names = Object.keys(contenders)

  let sequence = 0
  const run = async (name: string, seconds: number) => {
    const latencies: Array<number> = []
    const cpuBefore = postgresCpuSeconds()
    const hostBefore = process.cpuUsage()
    const tripsBefore = roundTrips
    const start = performance.now()
    while (performance.now() - start < seconds * 1000) {
      const began = performance.now()
      await contenders[name]!(sequence++)
      latencies.push(performance.now() - began)
    }
    const elapsed = (performance.now() - start) / 1000
    const hostCpu = process.cpuUsage(hostBefore)
    latencies.sort((a, b) => a - b)
    return {
      rate: latencies.length / elapsed,
      p50: latencies[Math.floor(latencies.length * 0.5)]!,
      p99: latencies[Math.floor(latencies.length * 0.99)]!,
      cpuMicros: ((postgresCpuSeconds() - cpuBefore) / latencies.length) * 1e6,
      hostMicros: (hostCpu.user + hostCpu.system) / latencies.length,
      roundTrips: (roundTrips - tripsBefore) / latencies.length
    }
  }

  for (const name of names) await run(name, 1) // warm-up, not counted
  const results = new Map(names.map((name) => [name, [] as Array<Awaited<ReturnType<typeof run>>>]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) results.get(name)!.push(await run(name, SECONDS))
  }

  console.log(`\nA host's transaction on one connection (${ROUNDS} rounds of ${SECONDS} s each, medians)`)
  for (const name of names) {
    const rounds = results.get(name)!
    const of = (pick: (r: (typeof rounds)[number]) => number) => median(rounds.map(pick))
    console.log(
      `  ${name.padEnd(27)} ${of((r) => r.rate)
        .toFixed(0)
        .padStart(6)} tx/s   p50 ${of((r) => r.p50).toFixed(2)} ms` +
        `   p99 ${of((r) => r.p99).toFixed(2)} ms   CPU: host ${of((r) => r.hostMicros).toFixed(0)} µs/tx,` +
        ` PostgreSQL ${of((r) => r.cpuMicros).toFixed(0)} µs/tx` +
        `   ${of((r) => r.roundTrips).toFixed(2)} round trips`
    )
  }
  const ratio = (a: string, b: string) =>
    median(results.get(a)!.map((round, i) => round.rate / results.get(b)![i]!.rate))
  figure("order + publishIn / order (tx/s)", ratio("order + publishIn", "order"), "median of per-round ratios")
  figure(
    "order + publishIn / order + own outbox row (tx/s)",
    ratio("order + publishIn", "order + own outbox row"),
    "median of per-round ratios"
  )
  figure(
    "order + publishIn / order + its statement, raw (tx/s)",
    ratio("order + publishIn", "order + its statement, raw"),
    "median of per-round ratios"
  )
  const added = results.get("order + publishIn")![0]!.roundTrips - results.get("order")![0]!.roundTrips
  const ok = added <= 1
  console.log(`  target round trips publishIn adds: ${added.toFixed(2)} (needs ≤ 1) ${ok ? "PASS" : "FAIL"}`)

  const [{ events }] = (await host.query("SELECT count(*)::int AS events FROM waybill.events")).rows as [
    { events: number }
  ]
  const published = results.get("order + publishIn")!.length
  if (events === 0 || notified === 0) throw new Error(`nothing published (${events} events, ${notified} notified)`)
  console.log(`  (${events} events recorded in ${published} rounds plus the warm-up, ${notified} notifications)`)
  await listener.end()
  await host.end()
  if (!ok) process.exitCode = 1
} finally {
  await database.drop()
}
