/**
 * Profiles one route of the reference server (`BENCH_ROUTE=events|drafts|health|shapes`): the
 * server runs with `--cpu-prof` under autocannon load, then the profile's self time is summed
 * per function and per source (Effect, platform, pg, ours) and printed.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { master, tourCreated } from "./payloads.js"
import { apiKey, freshDatabase, load, startServer } from "./server.js"

const route = process.env.BENCH_ROUTE ?? "events"
const dir = mkdtempSync(join(tmpdir(), "waybill-prof-"))
process.env.BENCH_CPU_PROF = dir
const database = await freshDatabase()
const server = await startServer(database.url, { WAYBILL_LOG_LEVEL: "warn" })
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
console.log(`${route}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms`)
server.stop()
let file: string | undefined
for (let i = 0; i < 100 && file === undefined; i++) {
  await new Promise((resolve) => setTimeout(resolve, 100))
  file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"))
}
await new Promise((resolve) => setTimeout(resolve, 500))
await database.drop()
interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount: number
  children?: Array<number>
}
const profile = JSON.parse(readFileSync(join(dir, file!), "utf8")) as { nodes: Array<Node> }
const total = profile.nodes.reduce((sum, node) => sum + node.hitCount, 0)
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
  bySource.set(source, (bySource.get(source) ?? 0) + node.hitCount)
  const key = `${node.callFrame.functionName || "(anon)"} ${node.callFrame.url.replace(/.*node_modules\//, "").replace(/.*\/packages\//, "")}:${node.callFrame.lineNumber}`
  byFunction.set(key, (byFunction.get(key) ?? 0) + node.hitCount)
}
const top = (map: Map<string, number>, n: number) =>
  [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`).join("\n")
console.log(`\nself time by source (${total} samples)\n${top(bySource, 25)}\n\nself time by function\n${top(byFunction, 45)}`)
