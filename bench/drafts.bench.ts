/**
 * `POST /drafts` of a realistic recurring master against the reference server on PostgreSQL,
 * beside the same server's `GET /health` as the ceiling, in one run (issue 7).
 */
import { apiKey, databaseServerUrl, freshDatabase, load, reportLoad, startServer } from "./server.js"

const master = {
  origin: "manual",
  status: "draft",
  name: "Line Hamburg–München {{ weekday }} {{ date }}",
  transportShapeId: "shape_line",
  transport: {
    shipperId: "shp_1",
    multiStopData: {
      stops: [
        {
          address: { street: "Hafenstraße 1", city: "Hamburg", country: "DEU" },
          timeWindow: { from: "06:00", to: "08:00" },
          loads: [{ weightKg: 800 }, { weightKg: 400 }]
        },
        {
          address: { street: "Messberg 4", city: "Hamburg", country: "DEU" },
          timeWindow: { from: "09:00", to: "10:00" },
          loads: [{ weightKg: 300 }]
        },
        {
          address: { street: "Marienplatz 1", city: "München", country: "DEU" },
          timeWindow: { from: "12:00", to: "14:00" },
          dayOffset: 1
        }
      ]
    },
    tour: { vehicleClass: "vc_12t" }
  },
  recurringSchedule: {
    cronExpressions: ["0 6 * * 1-5", "30 7 * * 6"],
    timezone: "Europe/Berlin",
    leadTimeDays: 7,
    startsAt: Math.floor(Date.now() / 1000) + 86_400,
    endsAt: Math.floor(Date.now() / 1000) + 365 * 86_400,
    weekdayTimeOffsets: { sat: 60 },
    vehicleClassAdjustmentStrategy: "recalculate"
  }
}

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
