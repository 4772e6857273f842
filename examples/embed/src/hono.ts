/**
 * Waybill in a Hono application served by `@hono/node-server`, under `/waybill`. Hono hands
 * over a Fetch `Request` already, so no adapter is needed: `mount` strips the mount path.
 *
 *   WAYBILL_API_KEYS=acme:a-long-random-key npx tsx examples/embed/src/hono.ts
 */
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { serve } from "@hono/node-server"
import * as Waybill from "@waybill/server/Waybill"
import { Hono } from "hono"
import { mount } from "hono/mount"
import { type Running, runIfMain } from "./Main.js"

export const start = async (port: number, env: Record<string, string | undefined> = process.env): Promise<Running> => {
  const waybill = await Waybill.make({ env, basePath: "/waybill" })
  const app = new Hono()
  app.get("/", (c) => c.json({ app: "my backend" }))
  app.all(
    "/waybill/*",
    mount((request) => waybill.handler(request))
  )
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const listening = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => resolve(listening))
  })
  // What Node refuses before Hono sees a request gets the API's error body too (`serve` made an
  // HTTP/1.1 server: no `createServer` option was given).
  Waybill.answerClientErrors(server as Server)
  const { port: bound } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${bound}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await waybill.close()
    }
  }
}

runIfMain(import.meta.url, start, 3003)
