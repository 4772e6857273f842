/**
 * Profiles one route of the reference server (`BENCH_ROUTE=events|drafts|health|shapes`): the
 * server runs with `--cpu-prof` under autocannon load, then the profile's self time under load
 * (the start-up's samples left out) is summed per function and per source (Effect, platform,
 * pg, ours) and printed. `npm run bench:profile`, with `BENCH_ROUTE` and `BENCH_SECONDS`.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { master, tourCreated } from "./payloads.js"
import { apiKey, freshDatabase, load, startServer } from "./server.js"

const route = process.env.BENCH_ROUTE ?? "events"
const dir = mkdtempSync(join(tmpdir(), "waybill-prof-"))
process.env.BENCH_CPU_PROF = dir
const database = await freshDatabase()
const spawnedAt = Date.now()
// A server that does not start leaves no database behind.
const server = await startServer(database.url, { WAYBILL_LOG_LEVEL: "warn" }).catch(async (error) => {
  await database.drop()
  throw error
})
// The profile starts with the process: what came before the first request is start-up.
const startupUs = (Date.now() - spawnedAt) * 1000
const json = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }
const request =
  route === "events"
    ? { url: `${server.base}/events`, method: "POST" as const, body: tourCreated(1), headers: json }
    : route === "drafts"
      ? { url: `${server.base}/drafts`, method: "POST" as const, body: JSON.stringify(master), headers: json }
      : route === "shapes"
        ? { url: `${server.base}/transport-shapes`, headers: json }
        : { url: `${server.base}/health` }
const result = await load(route, { ...request, seconds: Number(process.env.BENCH_SECONDS ?? 6) })
  .finally(() => server.stop())
  .catch(async (error) => {
    await database.drop()
    throw error
  })
console.log(`${route}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms`)
// The server writes its profile as it exits (one more, small, for tsx's loader thread).
let files: Array<string> = []
for (let i = 0; i < 100 && files.length === 0; i++) {
  await new Promise((resolve) => setTimeout(resolve, 100))
  files = readdirSync(dir).filter((name) => name.endsWith(".cpuprofile"))
}
await new Promise((resolve) => setTimeout(resolve, 500))
const file = readdirSync(dir)
  .filter((name) => name.endsWith(".cpuprofile"))
  .sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0]
await database.drop()
interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: Array<number>
}
const profile = JSON.parse(readFileSync(join(dir, file!), "utf8")) as {
  nodes: Array<Node>
  samples: Array<number>
  timeDeltas: Array<number>
}
const hits = new Map<number, number>()
let elapsed = 0
profile.samples.forEach((id, i) => {
  elapsed += profile.timeDeltas[i]!
  if (elapsed > startupUs) hits.set(id, (hits.get(id) ?? 0) + 1)
})
const total = [...hits.values()].reduce((sum, count) => sum + count, 0)
const bySource = new Map<string, number>()
const byFunction = new Map<string, number>()
const sourceOf = (url: string) => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (m) return m[1]!
  if (url.includes("/packages/")) return `ours:${/packages\/([^/]+)/.exec(url)![1]}`
  if (url === "") return "(native/gc)"
  if (url.startsWith("node:")) return "node"
  return url
}
for (const node of profile.nodes) {
  const source = sourceOf(node.callFrame.url)
  const count = hits.get(node.id) ?? 0
  bySource.set(source, (bySource.get(source) ?? 0) + count)
  const key = `${node.callFrame.functionName || "(anon)"} ${node.callFrame.url.replace(/.*node_modules\//, "").replace(/.*\/packages\//, "")}:${node.callFrame.lineNumber}`
  byFunction.set(key, (byFunction.get(key) ?? 0) + count)
}
const top = (map: Map<string, number>, n: number) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`)
    .join("\n")
console.log(
  `\nself time by source (${total} samples)\n${top(bySource, 25)}\n\nself time by function\n${top(byFunction, 45)}`
)
