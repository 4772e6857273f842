/**
 * The hot queries at 10,000,000 deliveries kept in time ranges: a one-off measurement, not part of
 * `npm run bench` (filling the tables takes most of its time).
 *
 * In a schema of its own (`waybill_at_scale`, dropped at the end) of the database named by
 * `DATABASE_URL`, the ranges are made as production has them at the default 30-day retention: the
 * migrations run under a clock 30 days back (so their range of everything before ends there), then
 * `RetentionStore.prepare` at every range's length from 30 days ago to now makes the 3-day ranges
 * up to now and the three ahead. `INSERT … SELECT generate_series` statements of at most 1,000,000
 * rows then write `BENCH_DELIVERIES` (10,000,000) deliveries and half as many events, spread evenly
 * over the last 30 days: each event to two of 20 webhooks, the first always to one busy webhook
 * (half of the deliveries), the second round the 19 others; 90 % succeeded, 7 % failed, 3 %
 * pending (due since, unleased), each with one attempt; one of the 19, disabled a day ago, holds its
 * deliveries since then and its pending ones. After `VACUUM ANALYZE`, the stores' own methods run
 * as the service calls them: the median of 7 calls after 2 warm-ups, and the plan of each of their
 * statements under `EXPLAIN (ANALYZE, BUFFERS)`, with which ranges it read and which it left out.
 * Last, two removal runs (`RetentionStore.run`): one up to the first 3-day boundary, then one that
 * drops the oldest 3-day range of each table, each timed with its statements of 10 ms or more.
 * `BENCH_PLANS=1` prints every plan; `BENCH_DELIVERIES` sets the size (200000 runs in seconds).
 *
 * Usage: `DATABASE_URL=postgres://… node --conditions=@waybill/source --import tsx bench/at-scale.ts`
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Statement from "@effect/sql/Statement"
import * as Id from "@waybill/core/Id"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as Database from "@waybill/store-pg/Database"
import * as PgDeliveryStore from "@waybill/store-pg/PgDeliveryStore"
import * as PgOutboxReader from "@waybill/store-pg/PgOutboxReader"
import * as PgRetention from "@waybill/store-pg/PgRetention"
import * as PgWebhookRepository from "@waybill/store-pg/PgWebhookRepository"
import * as Testing from "@waybill/store-pg/Testing"
import * as DeliveryStats from "@waybill/webhooks/DeliveryStats"
import * as DeliveryStore from "@waybill/webhooks/DeliveryStore"
import { OutboxReader } from "@waybill/webhooks/OutboxReader"
import * as Retention from "@waybill/webhooks/Retention"
import { Webhook } from "@waybill/webhooks/Webhook"
import { WebhookRepository } from "@waybill/webhooks/WebhookRepository"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import pg from "pg"

const url = process.env.DATABASE_URL
if (url === undefined || url === "") {
  console.error("Set DATABASE_URL to a PostgreSQL database (a schema waybill_at_scale is made and dropped in it).")
  process.exit(1)
}
const schema = "waybill_at_scale"
const DELIVERIES = 2 * Math.floor(Number(process.env.BENCH_DELIVERIES ?? 10_000_000) / 2)
const EVENTS = DELIVERIES / 2
// Events per statement: their deliveries are 1,000,000 rows.
const CHUNK = 500_000
const WEBHOOKS = 20
const hour = 3_600_000
const day = 24 * hour
const retentionMs = Retention.defaultRetentionMs
const rangeMs = Retention.rangeMs(retentionMs)
const workspace = Schema.decodeSync(WorkspaceId)("bench")
const webhookId = (n: number) => `whk_bench${String(n).padStart(2, "0")}`
const busy = webhookId(0)
const small = webhookId(7)
// Disabled a day before the fill's end: holds its deliveries since, and its pending ones.
const held = webhookId(WEBHOOKS - 1)

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`
const gb = (bytes: number) => `${(bytes / 1e9).toFixed(2)} GB`
const date = (millis: number) => new Date(millis).toISOString().slice(0, 16).replace("T", " ")

/** The real clock moved by `offset` ms; sleeping as the real one does. */
const shiftedClock = (offset: number): Clock.Clock => {
  const real = Clock.make()
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => real.unsafeCurrentTimeMillis() + offset,
    currentTimeMillis: Effect.sync(() => real.unsafeCurrentTimeMillis() + offset),
    unsafeCurrentTimeNanos: () => real.unsafeCurrentTimeNanos() + BigInt(offset) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => real.unsafeCurrentTimeNanos() + BigInt(offset) * 1_000_000n),
    sleep: (duration) => real.sleep(duration)
  }
}

const dropSchema = async () => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await client.end()
}

interface StoredRange {
  readonly parent: string
  readonly name: string
  readonly from: number | null
  readonly to: number
}

// The time of a range's bound (`dlv_` and the 10 characters of an id's time).
const boundTime = (bound: string) => Option.getOrNull(Id.timeOf(bound.padEnd(bound.indexOf("_") + 27, "0")))

const ranges = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ parent: string; name: string; bound: string }>`
    SELECT p.relname AS parent, c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
    WHERE p.relkind = 'p' AND p.relnamespace = current_schema()::regnamespace`
  return rows
    .flatMap((row): Array<StoredRange> => {
      const match = /FROM \((?:MINVALUE|'([^']*)')\) TO \('([^']*)'\)/.exec(row.bound)
      if (match === null) return []
      const from = match[1] === undefined ? null : boundTime(match[1])
      const to = boundTime(match[2]!)
      return to === null ? [] : [{ parent: row.parent, name: row.name, from, to }]
    })
    .sort((a, b) => a.parent.localeCompare(b.parent) || (a.from ?? 0) - (b.from ?? 0))
})

// What a plan says: its times, and per scan the range it read (or was planned to) and how.
interface Scan {
  readonly kind: string
  readonly index: string | undefined
  readonly relation: string
  readonly executed: boolean
}

const scansOf = (plan: string): Array<Scan> =>
  plan.split("\n").flatMap((line) => {
    const match =
      /(Seq Scan|Index Only Scan(?: Backward)?|Index Scan(?: Backward)?|Bitmap Heap Scan) (?:using (\S+) )?on (\S+)/.exec(
        line
      )
    if (match === null) return []
    return [{ kind: match[1]!, index: match[2], relation: match[3]!, executed: !line.includes("(never executed)") }]
  })

const program = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const store = yield* DeliveryStore.DeliveryStore
  const outbox = yield* OutboxReader
  const retention = yield* Retention.RetentionStore
  const webhooks = yield* WebhookRepository

  // 1. Ranges: the migrations made the range of everything before and minute ranges 30 days ago;
  // a removal run's preparation at every range's length since makes the 3-day ranges.
  const now = Date.now()
  for (let step = retentionMs / rangeMs; step >= 0; step--) yield* retention.prepare(now - step * rangeMs, retentionMs)
  const made = yield* ranges
  for (const parent of ["deliveries", "events", "alerts"]) {
    const own = made.filter((range) => range.parent === parent)
    console.log(`${parent}: ${own.length} ranges`)
    if (parent === "deliveries") {
      for (const range of own) {
        console.log(
          `  ${range.name}  ${range.from === null ? "(everything before)".padEnd(16) : date(range.from)} → ${date(range.to)}`
        )
      }
    }
  }

  // 2. The rows. Ids carry their time as Id.format writes it (checked against it below) and a
  // tail from the row's number.
  const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
  const digits = Array.from(
    { length: 10 },
    (_, i) => `substr('${alphabet}', ((ms >> ${5 * (9 - i)}) & 31)::int + 1, 1)`
  ).join(" || ")
  yield* sql.unsafe(
    `CREATE FUNCTION at_scale_time(ms bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT ${digits} $$`
  )
  const [check] = yield* sql<{ time: string }>`SELECT at_scale_time(${now}::bigint) AS time`
  if (check?.time !== Id.format("dlv", now, new Uint8Array(10)).slice(4, 14)) {
    return yield* Effect.die(new Error(`at_scale_time(${now}) = ${check?.time}`))
  }

  for (let n = 0; n < WEBHOOKS; n++) {
    const disabled = webhookId(n) === held
    yield* webhooks.insert(
      Schema.decodeUnknownSync(Webhook)({
        id: webhookId(n),
        workspaceId: workspace,
        url: `https://receiver.example/hooks/${n}`,
        events: ["tour-created"],
        filters: {},
        auth: { type: "bearer", token: "sealed" },
        description: null,
        createdAt: Math.floor((now - retentionMs) / 1000),
        ...(disabled
          ? { status: "disabled", disabledReason: "manual", disabledAt: Math.floor((now - day) / 1000) }
          : {})
      }),
      100
    )
  }

  const start = now - retentionMs
  const heldFrom = now - day
  console.log(
    `\ninserting ${EVENTS.toLocaleString("en")} events and ${DELIVERIES.toLocaleString("en")} deliveries over ${date(start)} → ${date(now)} …`
  )
  const filling = performance.now()
  for (let from = 0; from < EVENTS; from += CHUNK) {
    const to = Math.min(EVENTS, from + CHUNK)
    // Event n at start + n × 30 days / EVENTS (ms); `created_at` in seconds. In time order, so
    // each statement's transaction id (the outbox's order) grows with time as in production.
    yield* sql`
      INSERT INTO events (id, workspace_id, type, created_at, body)
      SELECT 'evt_' || at_scale_time(t) || lpad(n::text, 16, '0'), ${workspace}, 'tour-created', t / 1000,
             '{"type":"tour-created","payload":{"tour":{"id":"tour_' || n || '","status":"planned"}}}'
      FROM generate_series(${from}::bigint, ${to - 1}::bigint) n,
           LATERAL (SELECT ${start}::bigint + n * ${retentionMs}::bigint / ${EVENTS}::bigint AS t) e`
    // Two deliveries per event (k): the first to the busy webhook, the second round the others;
    // statuses by r, spread over every webhook alike.
    yield* sql`
      INSERT INTO deliveries (id, workspace_id, webhook_id, event_id, event_type, event_created_at, created_at, status,
                              due_at, attempts, latency_ms)
      SELECT 'dlv_' || tt || lpad((2 * n + k)::text, 16, '0'), ${workspace}, hook, 'evt_' || tt || lpad(n::text, 16, '0'),
             'tour-created', t / 1000, t / 1000, status,
             CASE WHEN status = 'pending' THEN t + 10000 ELSE t END,
             CASE WHEN status = 'held' AND t >= ${heldFrom}::bigint THEN '[]'::jsonb
                  ELSE jsonb_build_array(jsonb_build_object('at', t / 1000,
                         'statusCode', CASE WHEN status = 'succeeded' THEN 200 ELSE 503 END, 'durationMs', 12,
                         'error', null, 'trigger', 'automatic')) END,
             CASE WHEN status IN ('succeeded', 'failed') THEN 20 + (2 * n + k) % 480 END
      FROM generate_series(${from}::bigint, ${to - 1}::bigint) n, (VALUES (0), (1)) AS ks(k),
           LATERAL (SELECT ${start}::bigint + n * ${retentionMs}::bigint / ${EVENTS}::bigint AS t) e,
           LATERAL (SELECT at_scale_time(t) AS tt,
                           'whk_bench' || lpad((CASE WHEN k = 0 THEN 0 ELSE 1 + n % 19 END)::text, 2, '0') AS hook,
                           (n + 50 * k) % 100 AS r) h,
           LATERAL (SELECT CASE WHEN hook = ${held} AND (t >= ${heldFrom}::bigint OR r >= 97) THEN 'held'
                                WHEN r < 90 THEN 'succeeded' WHEN r < 97 THEN 'failed' ELSE 'pending' END AS status) s`
    console.log(
      `  ${to.toLocaleString("en")} events, ${(2 * to).toLocaleString("en")} deliveries (${seconds(filling)})`
    )
  }
  const inserted = seconds(filling)
  // What the statements that end deliveries keep per webhook and hour (statistics).
  const rolling = performance.now()
  yield* Testing.fillDeliveryHours
  console.log(`delivery_hours filled in ${seconds(rolling)}`)
  const vacuuming = performance.now()
  for (const table of ["events", "deliveries", "alerts", "delivery_hours"]) yield* sql.unsafe(`VACUUM ANALYZE ${table}`)
  console.log(`inserted in ${inserted}, VACUUM ANALYZE ${seconds(vacuuming)}`)
  const sizes = yield* sql<{ table: string; heap: number; indexes: number }>`
    SELECT p.relname AS table, sum(pg_table_size(t.relid))::bigint AS heap, sum(pg_indexes_size(t.relid))::bigint AS indexes
    FROM pg_class p, pg_partition_tree(p.oid) t
    WHERE p.relnamespace = current_schema()::regnamespace AND p.relkind = 'p'
    GROUP BY p.relname ORDER BY p.relname`
  let total = 0
  for (const size of sizes) {
    total += size.heap + size.indexes
    console.log(`  ${size.table}: table ${gb(size.heap)}, indexes ${gb(size.indexes)}`)
  }
  console.log(`  in all ${gb(total)}`)

  // 3. The stores' methods. Each statement they run is explained first (and then runs as it would).
  const indexParents = new Map(
    (yield* sql<{ name: string; parent: string }>`
      SELECT c.relname AS name, p.relname AS parent
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE c.relkind = 'i' AND c.relnamespace = current_schema()::regnamespace`).map((row) => [row.name, row.parent])
  )
  const rangeCount = new Map<string, number>()
  for (const range of yield* ranges) rangeCount.set(range.parent, (rangeCount.get(range.parent) ?? 0) + 1)
  // Ranges without a row (those ahead, the minute ones at the start, the one of everything before).
  const empty = new Set(
    (yield* sql<{ name: string }>`
      SELECT c.relname AS name FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid
      WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace AND c.reltuples <= 0`).map(
      (row) => row.name
    )
  )
  const parentOf = (relation: string) => /^(events|deliveries|alerts)_(before|r[0-9a-z]{10})$/.exec(relation)?.[1]

  const plans: Array<string> = []
  const explained = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Statement.withTransformer(effect, (statement, client) => {
      const [text, params] = statement.compile()
      return Effect.as(
        Effect.tap(
          Statement.withTransformerDisabled(
            client.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params)
          ),
          (rows) => Effect.sync(() => plans.push(rows.map((row) => row["QUERY PLAN"]).join("\n")))
        ).pipe(Effect.orDie),
        statement
      )
    })

  const results: Array<Record<string, string | number>> = []
  const measure = <A>(query: string, run: () => Effect.Effect<A>, answer: (result: A) => string | number) =>
    Effect.gen(function* () {
      yield* run()
      yield* run()
      const times: Array<number> = []
      let last: A | undefined
      for (let i = 0; i < 7; i++) {
        const started = performance.now()
        last = yield* run()
        times.push(performance.now() - started)
      }
      plans.length = 0
      yield* explained(run())
      const sum = (pattern: RegExp) =>
        plans.reduce((total, plan) => total + Number(pattern.exec(plan)?.[1] ?? Number.NaN), 0)
      const scans = plans.flatMap(scansOf)
      const read = new Map<string, { planned: Set<string>; read: Set<string> }>()
      for (const scan of scans) {
        const parent = parentOf(scan.relation)
        if (parent === undefined) continue
        const entry = read.get(parent) ?? { planned: new Set(), read: new Set() }
        entry.planned.add(scan.relation)
        if (scan.executed) entry.read.add(scan.relation)
        read.set(parent, entry)
      }
      const access = new Map<string, number>()
      let emptyScans = 0
      for (const scan of scans) {
        if (empty.has(scan.relation)) {
          emptyScans++
          continue
        }
        const key = `${scan.kind} ${scan.index === undefined ? (parentOf(scan.relation) ?? scan.relation) : (indexParents.get(scan.index) ?? scan.index)}`
        access.set(key, (access.get(key) ?? 0) + 1)
      }
      results.push({
        query,
        answer: answer(last!),
        "median ms": Number(median(times).toFixed(1)),
        "EXPLAIN ms": Number(sum(/Execution Time: ([0-9.]+) ms/).toFixed(1)),
        "planning ms": Number(sum(/Planning Time: ([0-9.]+) ms/).toFixed(1)),
        "ranges read / planned / all": [...read]
          .map(([parent, entry]) => `${parent} ${entry.read.size}/${entry.planned.size}/${rangeCount.get(parent) ?? 0}`)
          .join(", "),
        access: [
          ...[...access].map(([key, count]) => (count > 1 ? `${key} ×${count}` : key)),
          ...(emptyScans > 0 ? [`${emptyScans} scans of empty ranges`] : [])
        ].join("; ")
      })
      if (process.env.BENCH_PLANS === "1") console.log(`\n${query}\n${plans.join("\n\n")}`)
    })

  const nowSeconds = Math.floor(now / 1000)
  const [position] = yield* sql<{ xid: string; seq: number }>`
    SELECT xid::text AS xid, seq FROM events ORDER BY xid DESC, seq DESC OFFSET 1000 LIMIT 1`
  yield* measure(
    "outbox read: 256 after a position 1,000 from the end",
    () => outbox.read(`${position!.xid}:${position!.seq}`, 256),
    (read) => `${read.events.length} events`
  )
  // A fan-out that fell three days behind.
  const [behind] = yield* sql<{ xid: string; seq: number }>`
    SELECT xid::text AS xid, seq FROM events WHERE id < ${Id.format("evt", now - 3 * day, new Uint8Array(10))}
    ORDER BY id DESC LIMIT 1`
  yield* measure(
    "outbox read: 256 after a position 3 days back",
    () => outbox.read(`${behind!.xid}:${behind!.seq}`, 256),
    (read) => `${read.events.length} events`
  )
  yield* measure(
    "claimDue: 256, at most 64 a webhook",
    () =>
      Effect.suspend(() => {
        const claimedAt = Date.now()
        return store.claimDue({
          now: claimedAt,
          limit: 256,
          maxPerWebhook: 64,
          maxInFlightPerWebhook: 32,
          roomByWebhook: new Map(),
          leaseUntil: claimedAt + 60_000,
          leaseToken: `bench${claimedAt}`
        })
      }),
    (claimed) => `${claimed.length} claimed`
  )
  yield* measure(
    "list: busy webhook, first page",
    () => store.list(workspace, busy, { limit: 20, after: undefined }),
    (page) => `${page.data.length} deliveries`
  )
  yield* measure(
    "list: small webhook, first page",
    () => store.list(workspace, small, { limit: 20, after: undefined }),
    (page) => `${page.data.length} deliveries`
  )
  const deep = Id.makeAt("dlv", now - 15 * day)
  yield* measure(
    "list: busy webhook, page 15 days back",
    () => store.list(workspace, busy, { limit: 20, after: deep }),
    (page) => `${page.data.length} deliveries`
  )
  for (const [label, id] of [
    ["busy", busy],
    ["small", small]
  ] as const) {
    for (const hours of [24, 168]) {
      yield* measure(
        `stats: ${label} webhook, ${hours} h`,
        () => store.stats(workspace, id, DeliveryStats.windowOf(nowSeconds, hours)),
        (stats) => `${(stats.succeeded + stats.failed + stats.pending + stats.held).toLocaleString("en")} deliveries`
      )
    }
  }
  // Ten at once, as ten consoles refreshing: the time until the last answers.
  yield* measure(
    "stats: ten at once, busy webhook, 168 h",
    () =>
      Effect.all(
        Array.from({ length: 10 }, () => store.stats(workspace, busy, DeliveryStats.windowOf(nowSeconds, 168))),
        { concurrency: "unbounded" }
      ),
    (all) => `${all.length} answers`
  )
  yield* measure(
    "held: the disabled webhook",
    () => store.held(workspace, [held]),
    (found) =>
      `${found.get(held)?.count ?? 0} held, oldest ${date(Option.getOrElse(Id.timeOf(found.get(held)?.oldestId ?? ""), () => 0))}`
  )
  // The first step of a replay, and the one after it (from the first step's cursor).
  const replay = (after: DeliveryStore.ReplayCursor | undefined) =>
    Effect.suspend(() =>
      store.replayStep({
        workspaceId: workspace,
        webhookId: busy,
        since: nowSeconds - 24 * 3600,
        until: nowSeconds,
        statuses: ["failed"],
        after,
        limit: 1_000,
        now: Date.now()
      })
    )
  const resent = (step: DeliveryStore.ReplayStep) => `${step.resent} resent`
  yield* measure("replayStep: busy webhook, failed of 24 h, first 1,000", () => replay(undefined), resent)
  const next = (yield* replay(undefined)).next
  yield* measure("replayStep: the same, the next 1,000", () => replay(next), resent)
  console.log(`\n${DELIVERIES.toLocaleString("en")} deliveries, ${EVENTS.toLocaleString("en")} events`)
  console.table(results)

  // 4. What dropping a range costs: a removal run once the oldest 3-day range is past the
  // retention (the shorter ones before it, up to the first 3-day boundary, go in a run first).
  const first = (yield* ranges).find(
    (range) => range.parent === "deliveries" && range.from !== null && range.from % rangeMs === 0
  )
  if (first !== undefined) {
    // Each statement's time: from its start to the next one's (or the run's end).
    const removal = (at: number) =>
      Effect.gen(function* () {
        yield* retention.prepare(at, retentionMs)
        const steps: Array<{ readonly at: number; readonly text: string }> = []
        const started = performance.now()
        const removed = yield* Statement.withTransformer(retention.run(at, retentionMs), (statement) =>
          Effect.sync(() => {
            steps.push({ at: performance.now(), text: statement.compile()[0].replace(/\s+/g, " ").trim() })
            return statement
          })
        )
        const ended = performance.now()
        const expired = removed?.expired.reduce((sum, group) => sum + group.count, 0) ?? 0
        const slow = steps
          .map((step, i) => ({ text: step.text.slice(0, 60), ms: (steps[i + 1]?.at ?? ended) - step.at }))
          .filter((step) => step.ms >= 10)
          .map((step) => `\n    ${step.ms.toFixed(0).padStart(6)} ms  ${step.text}`)
          .join("")
        return `${((ended - started) / 1000).toFixed(2)} s: ${removed?.deliveries.toLocaleString("en")} deliveries, ${removed?.events.toLocaleString("en")} events, ${removed?.alerts} alerts removed; ${expired.toLocaleString("en")} pending or held expired first; statements of 10 ms or more:${slow}`
      })
    console.log(
      `\nremoval run at ${date(first.from! + retentionMs)} (up to the first 3-day range): ${yield* removal(first.from! + retentionMs)}`
    )
    console.log(
      `removal run at ${date(first.to + retentionMs)} (the 3-day range ${date(first.from!)} → ${date(first.to)}): ${yield* removal(first.to + retentionMs)}`
    )
  }
})

const started = performance.now()
await dropSchema()
await Effect.runPromise(
  Effect.scoped(
    Effect.gen(function* () {
      // Built 30 days back: the migrations' range of everything before and their minute ranges end there.
      const context = yield* Layer.build(
        Layer.mergeAll(PgDeliveryStore.layer, PgOutboxReader.layer, PgRetention.layer, PgWebhookRepository.layer).pipe(
          Layer.provideMerge(Database.layer({ _tag: "Postgres", url: Redacted.make(url), maxConnections: 2, schema }))
        )
      ).pipe(Effect.withClock(shiftedClock(-retentionMs)))
      yield* Effect.provide(program, context)
    })
  ).pipe(Effect.ensuring(Effect.promise(dropSchema)))
)
console.log(`\ndone in ${seconds(started)}`)
