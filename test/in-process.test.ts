/**
 * `waybill.forWorkspace(id)`: every route a workspace has, answering in process what the HTTP
 * route answers (bodies, errors, defaults, events), checked side by side with the handler.
 */
import { rm } from "node:fs/promises"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { WaybillApi } from "@waybill/http/Api"
import * as InProcess from "@waybill/http/InProcess"
import { isWaybillError, WaybillError } from "@waybill/http/WaybillError"
import * as Waybill from "@waybill/server/Waybill"
import * as Testing from "@waybill/store-pg/Testing"
import { contractMaster } from "./fixtures.js"
import { runLogFormat } from "./json-logs.js"

const key = "in-process-key-0001"
let waybill: Waybill.Waybill
let acme: Waybill.WorkspaceApi
let dataDir: string

beforeAll(async () => {
  dataDir = await Testing.makeDataDir("waybill-in-process-")
  waybill = await Waybill.make({
    env: { WAYBILL_API_KEYS: `acme:${key},other:${key}-other`, WAYBILL_DATA_DIR: dataDir, ...runLogFormat }
  })
  acme = waybill.forWorkspace("acme")
}, 60_000)
afterAll(async () => {
  await waybill?.close()
  await rm(dataDir, { recursive: true, force: true })
})

const http = async (method: string, path: string, body?: unknown, apiKey = key) => {
  const response = await waybill.handler(
    new Request(`http://host${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  )
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

/** The rejection of a call, which must be a `WaybillError`. */
const refusal = async (call: Promise<unknown>): Promise<WaybillError> => {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error })
  )
  assert.isTrue("error" in outcome, `expected a refusal, got ${JSON.stringify(outcome)}`)
  const error = (outcome as { error: unknown }).error
  assert.isTrue(isWaybillError(error), String(error))
  return error as WaybillError
}

const sameRefusal = (error: WaybillError, answer: { status: number; body: unknown }) => {
  assert.strictEqual(error.status, answer.status)
  assert.deepStrictEqual(error.toJSON(), answer.body as never)
}

const webhook = (url: string) =>
  ({ url, events: ["tour-created"], auth: { type: "bearer", token: "a-receiver-token-0001" } }) as const

// Each function's path in the API object, `group.name`.
const functionPaths = (api: object): Array<string> =>
  Object.entries(api).flatMap(([group, functions]) =>
    typeof functions === "function"
      ? [group]
      : typeof functions === "object" && functions !== null
        ? Object.keys(functions).map((name) => `${group}.${name}`)
        : []
  )

describe("Waybill.forWorkspace", () => {
  it("covers every endpoint a workspace has, each once, and nothing else", () => {
    // Not the health checks, nor the console's check of the credential it signed in with.
    const endpoints = Object.entries(WaybillApi.groups)
      .flatMap(([group, definition]) =>
        group === "system" ? [] : Object.keys(definition.endpoints).map((name) => `${group}.${name}`)
      )
      .filter((endpoint) => endpoint !== "console.whoami")
    const called = Object.values(InProcess.endpoints)
    assert.deepStrictEqual([...called].sort(), [...endpoints].sort())
    // Besides the endpoints: publishIn, which writes in the host's transaction instead.
    assert.deepStrictEqual(functionPaths(acme).sort(), [...Object.keys(InProcess.endpoints), "events.publishIn"].sort())
  })

  it("mints console tokens without a key, as POST /console/tokens does; lists and revokes them", async () => {
    const minted = await acme.consoleToken({ scope: "read", ttlSeconds: 600, label: "Ada" })
    assert.match(minted.token, /^wbc_/)
    assert.strictEqual(minted.url, `/console#token=${minted.token}`)
    assert.deepStrictEqual({ scope: minted.scope, label: minted.label }, { scope: "read", label: "Ada" })
    assert.strictEqual((await http("GET", "/console/api/whoami", undefined, minted.token)).body.scope, "read")
    assert.strictEqual((await acme.consoleToken()).scope, "manage")
    const listed = await acme.consoleTokens.list()
    assert.deepStrictEqual(listed, (await http("GET", "/console/tokens")).body)
    assert.include(
      listed.data.map((token) => token.id),
      minted.id
    )
    const badBody = { ttlSeconds: 30, scope: "admin" }
    sameRefusal(await refusal(acme.consoleToken(badBody as never)), await http("POST", "/console/tokens", badBody))
    // Another workspace's token is not found there; its own workspace revokes it at once.
    sameRefusal(
      await refusal(waybill.forWorkspace("other").consoleTokens.revoke(minted.id)),
      await http("DELETE", `/console/tokens/${minted.id}`, undefined, `${key}-other`)
    )
    await acme.consoleTokens.revoke(minted.id)
    assert.strictEqual((await http("GET", "/webhooks", undefined, minted.token)).status, 401)
  })

  it("answers what the HTTP route answers, in the workspace it names", async () => {
    const created = await acme.webhooks.create(webhook("https://receiver.example/a"))
    assert.match(created.id, /^whk_/)
    const auth = created.auth as { token: string }
    assert.strictEqual(auth.token, "********")
    assert.deepStrictEqual(await acme.webhooks.get(created.id), (await http("GET", `/webhooks/${created.id}`)).body)
    const listed = await acme.webhooks.list({ limit: 1 })
    assert.deepStrictEqual(listed, (await http("GET", "/webhooks?limit=1")).body)
    // The query also takes the URL's text, as a JavaScript host may pass it.
    assert.deepStrictEqual(await acme.webhooks.list({ limit: "1" }), listed)
    assert.deepStrictEqual(
      await acme.webhooks.stats(created.id, { hours: 2 }),
      (await http("GET", `/webhooks/${created.id}/stats?hours=2`)).body
    )
    assert.deepStrictEqual(await acme.referenceData.vehicleClasses(), (await http("GET", "/vehicle-classes")).body)
    // Another workspace sees none of it.
    const other = waybill.forWorkspace("other")
    sameRefusal(
      await refusal(other.webhooks.get(created.id)),
      await http("GET", `/webhooks/${created.id}`, undefined, `${key}-other`)
    )
    const disabled = await acme.webhooks.disable(created.id)
    assert.strictEqual(disabled.status, "disabled")
    await acme.webhooks.delete(created.id)
    sameRefusal(await refusal(acme.webhooks.get(created.id)), await http("GET", `/webhooks/${created.id}`))
  })

  it("refuses as the HTTP route refuses: the same status, code, message and issues", async () => {
    const bad = { url: "ftp://x", events: ["no-such-event"] }
    sameRefusal(await refusal(acme.webhooks.create(bad as never)), await http("POST", "/webhooks", bad))
    sameRefusal(await refusal(acme.webhooks.list({ limit: 500 })), await http("GET", "/webhooks?limit=500"))
    sameRefusal(await refusal(acme.drafts.list({ limit: "many" })), await http("GET", "/drafts?limit=many"))
    const event = { type: "tour-created", payload: { nope: true } }
    sameRefusal(await refusal(acme.events.publish(event)), await http("POST", "/events", event))
    const action = { type: "fly" }
    sameRefusal(
      await refusal(acme.drafts.act("tdr_missing", action as never)),
      await http("POST", "/drafts/tdr_missing/actions", action)
    )
    const error = await refusal(acme.drafts.get("tdr_missing"))
    assert.instanceOf(error, WaybillError)
    assert.instanceOf(error, Error)
    assert.strictEqual(error.code, "not_found")
  })

  it("refuses what JSON cannot hold and text no route takes, naming where, before anything is stored", async () => {
    const dated = await refusal(
      acme.events.publish({ type: "tour-created", payload: { tour: { id: "t", at: new Date(0) } } })
    )
    assert.strictEqual(dated.status, 400)
    assert.deepStrictEqual(dated.issues, [{ path: "payload.tour.at", message: "is not a JSON value (Date object)" }])
    const nul = await refusal(acme.drafts.get("tdr_\u0000"))
    assert.strictEqual(nul.status, 400)
    assert.strictEqual(nul.issues[0]?.path, "path.id")
    let deep: unknown = {}
    for (let i = 0; i < 10_000; i++) deep = { deep }
    const tooDeep = await refusal(acme.events.publish({ type: "tour-created", payload: deep }))
    assert.strictEqual(tooDeep.status, 400)
    assert.match(tooDeep.message, /nests deeper than 64 levels/)
    const trace = await refusal(acme.events.publish({ type: "tour-created", payload: {}, traceparent: "nope" }))
    assert.deepStrictEqual(
      trace.issues.map((issue) => issue.path),
      ["traceparent"]
    )
  })

  it("publishes like POST /events, once per idempotency key", async () => {
    const event = {
      type: "tour-created",
      payload: { tour: { id: "tour_1", status: "planned", substatus: null, properties: {} } }
    }
    const first = await acme.events.publish({ ...event, idempotencyKey: "book-1" })
    assert.match(first.id, /^evt_/)
    assert.deepStrictEqual(await acme.events.publish({ ...event, idempotencyKey: "book-1" }), first)
    const reused = await refusal(acme.events.publish({ ...event, payload: {}, idempotencyKey: "book-1" }))
    assert.strictEqual(reused.status, 422)
    assert.strictEqual(reused.code, "idempotency_key_reused")
    const badKey = await refusal(acme.events.publish({ ...event, idempotencyKey: "no spaces allowed" }))
    assert.deepStrictEqual(
      badKey.issues.map((issue) => issue.path),
      ["idempotencyKey"]
    )
  })

  it("records a host's actor on an action, and its own when the host names none", async () => {
    const draft = await acme.drafts.create(contractMaster() as never)
    assert.deepStrictEqual(await acme.drafts.get(draft.id), (await http("GET", `/drafts/${draft.id}`)).body)
    const activated = await acme.drafts.act(
      draft.id,
      { type: "activate-recurring" },
      { actor: { type: "operator-user", id: "u_42" } }
    )
    assert.deepStrictEqual(activated.action.actor, { type: "operator-user", id: "u_42" })
    const paused = await acme.drafts.act(draft.id, { type: "pause-recurring" })
    assert.deepStrictEqual(paused.action.actor, InProcess.hostActor)
    const occurrences = await acme.drafts.occurrences(draft.id, { days: 3 })
    assert.deepStrictEqual(occurrences, (await http("GET", `/drafts/${draft.id}/occurrences?days=3`)).body)
    const tours = await acme.tours.list({ draftId: draft.id })
    assert.deepStrictEqual(tours, (await http("GET", `/tours?draftId=${draft.id}`)).body)
    sameRefusal(
      await refusal(acme.drafts.act(draft.id, { type: "pause-recurring" })),
      await http("POST", `/drafts/${draft.id}/actions`, { type: "pause-recurring" })
    )
  })

  it("throws on a workspace id no route would take, and refuses every call once closed", async () => {
    assert.throws(() => waybill.forWorkspace("not a workspace"), WaybillError)
    const closing = await Waybill.make({
      env: {
        WAYBILL_API_KEYS: `acme:${key}`,
        WAYBILL_DATA_DIR: await Testing.makeDataDir("waybill-closing-"),
        ...runLogFormat
      }
    })
    const api = closing.forWorkspace("acme")
    assert.deepStrictEqual((await api.webhooks.list()).data, [])
    await closing.close()
    const closed = await refusal(api.webhooks.list())
    assert.strictEqual(closed.status, 503)
  })
})
