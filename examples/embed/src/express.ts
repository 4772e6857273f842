/**
 * Waybill in an Express 5 application, under `/waybill`.
 *
 *   WAYBILL_API_KEYS=acme:a-long-random-key npx tsx examples/embed/src/express.ts
 */
import type { AddressInfo } from "node:net"
import { getRequestListener } from "@hono/node-server"
import * as Waybill from "@waybill/server/Waybill"
import express from "express"
import { type Running, runIfMain } from "./Main.js"

// The application: its own routes, and Waybill's handler mounted under /waybill.
export const application = (waybill: Pick<Waybill.Waybill, "handler">) => {
  const app = express()
  app.get("/", (_req, res) => {
    res.json({ app: "my backend" })
  })
  // Express removes "/waybill" from req.url before the listener sees it. Register no body
  // parser (express.json()) in front of it: Waybill reads and checks the raw body itself.
  app.use("/waybill", getRequestListener(waybill.handler))
  return app
}

export const start = async (port: number, env: Record<string, string | undefined> = process.env): Promise<Running> => {
  const waybill = await Waybill.make({ env, basePath: "/waybill" })
  const app = application(waybill)
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve, reject) => {
    const listening = app.listen(port, "127.0.0.1", (error?: Error) => (error ? reject(error) : resolve(listening)))
  })
  const { port: bound } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${bound}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await waybill.close()
    }
  }
}

runIfMain(import.meta.url, start, 3002)
