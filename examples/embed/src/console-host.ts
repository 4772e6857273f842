/**
 * The operator console for your own users, in your own settings page: this Express host signs its
 * user in (a fake sign-in: `/login?user=ada`), mints a console token for that user's workspace in
 * process (`manage` for Ada, `read` for Grace) and frames the console with it. Only this host's
 * origin may frame the console (`WAYBILL_CONSOLE_FRAME_ANCESTORS`, set to it unless given), and a
 * user whose access ends is offered the way back to this page (`?return=`).
 *
 *   WAYBILL_API_KEYS=acme:a-long-random-key npx tsx examples/embed/src/console-host.ts
 *   then open http://127.0.0.1:3004/login?user=ada
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { getRequestListener } from "@hono/node-server"
import * as Waybill from "@waybill/server/Waybill"
import express from "express"
import { type Running, runIfMain } from "./Main.js"

// Your application's users, as your own sign-in knows them.
interface User {
  readonly name: string
  readonly workspace: string
  readonly access: "read" | "manage"
}

const users: Readonly<Record<string, User>> = {
  ada: { name: "Ada", workspace: "acme", access: "manage" },
  grace: { name: "Grace", workspace: "acme", access: "read" }
}

const SIGNED_IN = "host_user"

const userOf = (cookie: string | undefined): User | undefined => {
  const id = /(?:^|;\s*)host_user=([a-z]+)/.exec(cookie ?? "")?.[1]
  return id === undefined ? undefined : users[id]
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const settingsPage = (user: User, consoleUrl: string) => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Settings · Webhooks · Acme</title>
    <link rel="icon" href="data:,">
    <style>
      body { margin: 0; font-family: system-ui, sans-serif; background: #f3f4f6; }
      header { display: flex; justify-content: space-between; padding: 0.75rem 1rem; background: #1f2937; color: #fff; }
      main { padding: 1rem; }
      iframe { width: 100%; height: 80vh; border: 1px solid #d1d5db; border-radius: 8px; background: #fff; }
    </style>
  </head>
  <body>
    <header><strong>Acme</strong><span>${escapeHtml(user.name)}</span></header>
    <main>
      <h1>Settings</h1>
      <iframe title="Webhooks" src="${escapeHtml(consoleUrl)}"></iframe>
    </main>
  </body>
</html>
`

/** The host: its sign-in, its settings page framing the console, and Waybill under `/waybill`. */
export const application = (waybill: Pick<Waybill.Waybill, "handler" | "forWorkspace">, origin: string) => {
  const app = express()
  app.get("/login", (req, res) => {
    const id = String(req.query.user ?? "")
    if (users[id] === undefined) {
      res.status(404).send("No such user")
      return
    }
    res.cookie(SIGNED_IN, id, { httpOnly: true, sameSite: "lax" }).redirect("/settings/webhooks")
  })
  app.get("/settings/webhooks", async (req, res) => {
    const user = userOf(req.headers.cookie)
    if (user === undefined) {
      res.redirect("/login?user=ada")
      return
    }
    // One token per page view, as short-lived as a page is open; the console says when it ends.
    const minted = await waybill
      .forWorkspace(user.workspace)
      .consoleToken({ scope: user.access, ttlSeconds: 900, label: user.name })
    const [path, fragment] = minted.url.split("#")
    const back = encodeURIComponent(`${origin}/settings/webhooks`)
    // The page holds the token: never cached, never sent on as a referrer.
    res.set({ "cache-control": "no-store", "referrer-policy": "no-referrer" })
    res.type("html").send(settingsPage(user, `${path}?return=${back}#${fragment}`))
  })
  app.use("/waybill", getRequestListener(waybill.handler))
  return app
}

export const start = async (port: number, env: Record<string, string | undefined> = process.env): Promise<Running> => {
  // Listening first: the host's own origin is the one that may frame the console.
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => resolve())
  })
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const waybill = await Waybill.make({
    env: { ...env, WAYBILL_CONSOLE_FRAME_ANCESTORS: env.WAYBILL_CONSOLE_FRAME_ANCESTORS ?? origin },
    basePath: "/waybill"
  }).catch(async (error: unknown) => {
    await new Promise((resolve) => server.close(resolve))
    throw error
  })
  server.on("request", application(waybill, origin))
  Waybill.answerClientErrors(server)
  return {
    url: origin,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await waybill.close()
    }
  }
}

runIfMain(import.meta.url, start, 3004)
