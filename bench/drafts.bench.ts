/**
 * `POST /drafts` of a realistic recurring master against the reference server on PostgreSQL,
 * beside the same server's `GET /health` as the ceiling, in one run.
 */
import { master } from "./payloads.js"
import { apiKey, databaseServerUrl, freshDatabase, load, reportLoad, startServer } from "./server.js"

const database = await freshDatabase()
console.log(
  `PostgreSQL: ${new URL(databaseServerUrl).host}, fresh database; server in its own process; autocannon, 16 connections`
)
const server = await startServer(database.url)
try {
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }
  await load("warm-up", {
    url: `${server.base}/drafts`,
    method: "POST",
    body: JSON.stringify(master),
    headers,
    seconds: 3
  })
  const health = await load("GET /health (ceiling)", { url: `${server.base}/health` })
  const create = await load("POST /drafts (recurring master)", {
    url: `${server.base}/drafts`,
    method: "POST",
    body: JSON.stringify(master),
    headers
  })
  reportLoad("Drafts", [health, create], "GET /health (ceiling)")
  if (create.non2xx > 0) {
    console.error("POST /drafts answered non-2xx responses")
    process.exitCode = 1
  }
} finally {
  server.stop()
  await new Promise((resolve) => setTimeout(resolve, 500))
  await database.drop()
}
