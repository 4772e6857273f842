/**
 * Waybill in a plain `node:http` server, under `/waybill`, beside the application's own routes.
 *
 *   WAYBILL_API_KEYS=acme:a-long-random-key npx tsx examples/embed/src/node-http.ts
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { getRequestListener } from "@hono/node-server"
import * as Waybill from "@waybill/server/Waybill"
import { type Running, runIfMain } from "./Main.js"

export const start = async (port: number, env: Record<string, string | undefined> = process.env): Promise<Running> => {
  const waybill = await Waybill.make({ env, basePath: "/waybill" })
  const api = getRequestListener(waybill.handler)
  const server = createServer((req, res) => {
    const url = req.url ?? "/"
    if (url === "/waybill" || url.startsWith("/waybill/") || url.startsWith("/waybill?")) {
      // The API's routes start at its root: strip the mount path.
      req.url = url.slice("/waybill".length) || "/"
      void api(req, res)
      return
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ app: "my backend" }))
  })
  // What Node refuses before the listener sees a request gets the API's error body too.
  Waybill.answerClientErrors(server)
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const { port: bound } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${bound}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await waybill.close()
    }
  }
}

runIfMain(import.meta.url, start, 3001)
