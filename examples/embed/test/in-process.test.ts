/** `src/in-process.ts`: a webhook registered in process, a refusal as the route's body, its log read. */
import { rm } from "node:fs/promises"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Waybill from "@waybill/server/Waybill"
import * as Testing from "@waybill/store-pg/Testing"
import { latestDeliveries, subscribe } from "../src/in-process.js"
import { runLogFormat } from "./started.js"

let waybill: Waybill.Waybill
let dataDir: string
beforeAll(async () => {
  dataDir = await Testing.makeDataDir("waybill-example-in-process-")
  waybill = await Waybill.make({
    env: { WAYBILL_API_KEYS: "acme:in-process-example-key", WAYBILL_DATA_DIR: dataDir, ...runLogFormat }
  })
}, 60_000)
afterAll(async () => {
  await waybill?.close()
  await rm(dataDir, { recursive: true, force: true })
})

describe("examples/embed: in process", () => {
  it("registers a webhook and reads its delivery log; a refused one answers the route's status and body", async () => {
    const created = await subscribe(waybill, "acme", "https://hooks.example.com/orders", "a-long-shared-secret-0001")
    assert.strictEqual(created.status, 201)
    const hook = created.body as { id: string }
    assert.deepStrictEqual(await latestDeliveries(waybill, "acme", hook.id), { data: [], nextCursor: null })
    const refused = await subscribe(waybill, "acme", "ftp://hooks.example.com", "short")
    assert.strictEqual(refused.status, 400)
    const body = refused.body as { code: string; issues: ReadonlyArray<{ path: string }> }
    assert.strictEqual(body.code, "bad_request")
    assert.includeMembers(
      body.issues.map((issue) => issue.path),
      ["url"]
    )
  })
})
