/**
 * A host that books orders in its own tables and tells its customers' webhooks in the same
 * transaction: the order and its `order-created` event commit together or not at all. Express and
 * node-postgres, Waybill on the same database (`DATABASE_URL`), in its own schema.
 *
 *   DATABASE_URL=postgres://… WAYBILL_SECRET_KEY=… WAYBILL_API_KEYS=acme:a-long-random-key \
 *     npx tsx examples/embed/src/orders.ts
 */
import { randomUUID } from "node:crypto"
import { getRequestListener } from "@hono/node-server"
import * as Waybill from "@waybill/server/Waybill"
import express from "express"
import pg from "pg"
import { serve } from "./express.js"
import { type Running, runIfMain } from "./Main.js"

/** The host's own tables, in its own schema (`public`); Waybill's stay in `waybill`. */
export const ownTables = `
  CREATE TABLE IF NOT EXISTS customers (id text PRIMARY KEY, orders integer NOT NULL DEFAULT 0);
  CREATE TABLE IF NOT EXISTS orders (
    id text PRIMARY KEY,
    customer_id text NOT NULL REFERENCES customers,
    booked_at timestamptz NOT NULL DEFAULT now()
  )`

/** Books an order for a customer: three statements and the event, one transaction. */
export const bookOrder = async (client: pg.ClientBase, waybill: Waybill.WorkspaceApi, customerId: string) => {
  const id = `ord_${randomUUID()}`
  await client.query("BEGIN")
  try {
    await client.query("INSERT INTO customers (id) VALUES ($1) ON CONFLICT DO NOTHING", [customerId])
    await client.query("INSERT INTO orders (id, customer_id) VALUES ($1, $2)", [id, customerId])
    const event = await waybill.events.publishIn(client, {
      type: "order-created",
      payload: { order: { id, properties: { customerId } } },
      // One customer's events reach a webhook with "ordering": "key" in order.
      orderingKey: customerId
    })
    await client.query("UPDATE customers SET orders = orders + 1 WHERE id = $1", [customerId])
    await client.query("COMMIT")
    return { id, eventId: event.id }
  } catch (error) {
    await client.query("ROLLBACK")
    throw error
  }
}

export const start = async (port: number, env: Record<string, string | undefined> = process.env): Promise<Running> => {
  const waybill = await Waybill.make({ env, basePath: "/waybill" })
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL })
  await pool.query(ownTables)
  const acme = waybill.forWorkspace("acme")
  const app = express()
  app.post("/customers/:customerId/orders", async (req, res, next) => {
    const client = await pool.connect()
    try {
      res.status(201).json(await bookOrder(client, acme, req.params.customerId))
    } catch (error) {
      // A refused event is the API's error body; anything else is the host's own failure.
      if (Waybill.isWaybillError(error)) res.status(error.status).json(error)
      else next(error)
    } finally {
      client.release()
    }
  })
  app.use("/waybill", getRequestListener(waybill.handler))
  return serve(app, port, async () => {
    await pool.end()
    await waybill.close()
  })
}

runIfMain(import.meta.url, start, 3005)
