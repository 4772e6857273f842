/**
 * An existing backend outside the workspace, built from the packed `@waybill/*` tarballs
 * (`test/package.test.ts` copies this file into a fresh project, type-checks it under
 * `moduleResolution: nodenext`, compiles it with tsc and runs it with plain Node).
 *
 * It mounts Waybill under `/waybill` in an Express and in a Hono application, registers a webhook
 * through each, publishes an event, and verifies the signed delivery with the receiver kit of
 * `@waybill/signing`. It prints one JSON line per check.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { getRequestListener, serve } from "@hono/node-server"
import * as Waybill from "@waybill/server/Waybill"
import * as Receiver from "@waybill/signing/Receiver"
import * as Effect from "effect/Effect"
import express from "express"
import { Hono } from "hono"

const key = "consumer-test-key-0001"
const secret = "a shared secret of 16+ characters"

const listening = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  )

// The receiver verifies every delivery with the receiver kit before accepting it.
const verified = new Map<string, string>()
const receiver = createServer((request, response) => {
  Effect.runPromise(Receiver.verifyIncomingMessage(request, secret)).then(
    (delivery) => {
      const event = JSON.parse(delivery.text) as { id: string; type: string }
      verified.set(event.id, event.type)
      response.writeHead(204).end()
    },
    (error: unknown) => {
      console.error(`refused a delivery: ${String(error)}`)
      response.writeHead(401).end()
    }
  )
})
const receiverUrl = await listening(receiver)

const call = async (url: string, init: { method?: string; json?: unknown } = {}) => {
  const response = await fetch(url, {
    method: init.method ?? (init.json === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${key}`,
      ...(init.json === undefined ? {} : { "content-type": "application/json" })
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) })
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const exercise = async (framework: string, base: string) => {
  const health = await call(`${base}/waybill/health`)
  const openApi = await call(`${base}/waybill/openapi.json`)
  const webhook = await call(`${base}/waybill/webhooks`, {
    json: { url: `${receiverUrl}/hooks`, events: ["tour-created"], auth: { type: "hmac", secret } }
  })
  const published = await call(`${base}/waybill/events`, {
    json: { type: "tour-created", payload: { tour: { id: `tour_${framework}`, status: "planned", properties: {} } } }
  })
  const eventId = String(published.body.id)
  const deadline = Date.now() + 20_000
  while (!verified.has(eventId) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  console.log(
    JSON.stringify({
      framework,
      health: health.status,
      servers: openApi.body.servers,
      webhook: webhook.status,
      published: published.status,
      delivered: verified.get(eventId) ?? null
    })
  )
}

// The log format of the run that started this host (\`WAYBILL_LOG_FORMAT=json npm test\`), if any.
const env = {
  WAYBILL_API_KEYS: `acme:${key}`,
  WAYBILL_ALLOW_PRIVATE_TARGETS: "true",
  ...(process.env.WAYBILL_LOG_FORMAT === undefined ? {} : { WAYBILL_LOG_FORMAT: process.env.WAYBILL_LOG_FORMAT })
}

// Express: the Fetch handler as a Node listener; Express strips the mount path.
{
  const waybill = await Waybill.make({ env, basePath: "/waybill" })
  const app = express()
  app.use("/waybill", getRequestListener(waybill.handler))
  const server = createServer(app)
  await exercise("express", await listening(server))
  server.close()
  await waybill.close()
}

// Hono: `mount` hands the Fetch request over without the mount path.
{
  const waybill = await Waybill.make({ env, basePath: "/waybill" })
  const app = new Hono()
  app.mount("/waybill", waybill.handler)
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server
  await new Promise((resolve) => server.once("listening", resolve))
  await exercise("hono", `http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  server.close()
  await waybill.close()
}

receiver.close()
