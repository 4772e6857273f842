/**
 * Waybill in an Express 5 application, under `/waybill`; with `WAYBILL_METRICS_TOKEN` set, its
 * metrics at `/metrics` (Prometheus text, to that bearer token only).
 *
 *   WAYBILL_API_KEYS=acme:a-long-random-key npx tsx examples/embed/src/express.ts
 */
import type { AddressInfo } from "node:net"
import { getRequestListener } from "@hono/node-server"
import * as PrometheusText from "@waybill/core/PrometheusText"
import * as Authentication from "@waybill/http/Authentication"
import * as Observability from "@waybill/server/Observability"
import * as Waybill from "@waybill/server/Waybill"
import * as Redacted from "effect/Redacted"
import express from "express"
import { type Running, runIfMain } from "./Main.js"

/** Waybill's metrics as the host serves them: the text, behind a bearer token of the host's. */
export interface MetricsRoute {
  readonly token: Redacted.Redacted<string>
  readonly text: () => Promise<string>
}

// The application: its own routes, Waybill's handler mounted under /waybill, and the metrics.
export const application = (waybill: Pick<Waybill.Waybill, "handler">, metrics?: MetricsRoute) => {
  const app = express()
  app.get("/", (_req, res) => {
    res.json({ app: "my backend" })
  })
  if (metrics !== undefined) {
    app.get("/metrics", async (req, res) => {
      // The one Authorization header (Node's req.headers keeps the first of several).
      if (!Observability.isMetricsBearer(Authentication.authorizationOfRawHeaders(req.rawHeaders), metrics.token)) {
        res.status(401).json({ code: "unauthorized", message: "Bearer token required", issues: [] })
        return
      }
      res.type(PrometheusText.contentType).send(await metrics.text())
    })
  }
  // Express removes "/waybill" from req.url before the listener sees it. Register no body
  // parser (express.json()) in front of it: Waybill reads and checks the raw body itself.
  app.use("/waybill", getRequestListener(waybill.handler))
  return app
}

export const start = async (port: number, env: Record<string, string | undefined> = process.env): Promise<Running> => {
  const waybill = await Waybill.make({ env, basePath: "/waybill" })
  const token = env.WAYBILL_METRICS_TOKEN
  const app = application(
    waybill,
    token === undefined ? undefined : { token: Redacted.make(token), text: waybill.metrics }
  )
  return serve(app, port, () => waybill.close())
}

/** Serves an Express application on `port`; `close` stops it, then releases what it used (`release`). */
export const serve = async (app: express.Express, port: number, release: () => Promise<void>): Promise<Running> => {
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve, reject) => {
    const listening = app.listen(port, "127.0.0.1", (error?: Error) => (error ? reject(error) : resolve(listening)))
  })
  // What Node refuses before Express sees a request gets the API's error body too.
  Waybill.answerClientErrors(server)
  const { port: bound } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${bound}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await release()
    }
  }
}

runIfMain(import.meta.url, start, 3002)
