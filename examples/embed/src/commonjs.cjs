/**
 * Waybill in a CommonJS service (an `npm init -y` project, no "type": "module"), in Express,
 * under `/waybill`. Waybill's packages are ES modules, which Node 20.19 and later load with
 * `require`; `await` lives in an async main.
 *
 *   WAYBILL_API_KEYS=acme:a-long-random-key npx tsx examples/embed/src/commonjs.cjs
 */
const { getRequestListener } = require("@hono/node-server")
const Waybill = require("@waybill/server/Waybill")
const express = require("express")

async function main() {
  const waybill = await Waybill.make({ env: process.env, basePath: "/waybill" })
  const app = express()
  app.get("/", (_req, res) => {
    res.json({ app: "my backend" })
  })
  app.use("/waybill", getRequestListener(waybill.handler))
  const server = app.listen(Number(process.env.PORT ?? 3004), "127.0.0.1", () => {
    const url = `http://127.0.0.1:${server.address().port}`
    console.log(`Listening on ${url}; Waybill at ${url}/waybill (try ${url}/waybill/health)`)
  })
  Waybill.answerClientErrors(server)
  const stop = () => server.close(() => waybill.close().then(() => process.exit(0)))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
