import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Authorization, Hmac, StandardWebhooks } from "@waybill/signing"
import { Either, Redacted } from "effect"
import { fromEnv, type ReceiverConfig } from "../src/Config.js"
import { type ReceivedEvent, type RunningReceiver, type StartOptions, start } from "../src/Server.js"

const secret = "whk-demo-secret-0123456789"
const base: Omit<ReceiverConfig, "credentials"> = {
  host: "127.0.0.1",
  port: 0,
  toleranceSeconds: 300,
  maxBodyBytes: 64 * 1024,
  dedupCapacity: 100
}

const nowSeconds = () => Math.floor(Date.now() / 1000)

const envelope = (type = "tour-created") =>
  JSON.stringify({
    id: "evt_1q5pzf2a00k3m9v7x4c8d6b2ne",
    type,
    createdAt: nowSeconds(),
    payload: { tour: { id: "tour_1q5pzf2a00p7w3r9t6y2h8j4kq", status: "planned", substatus: null, properties: {} } }
  })

const running: Array<RunningReceiver> = []
// Child processes are killed here too, so a test that times out (and never reaches its own
// clean-up) leaves no receiver behind.
const children: Array<ChildProcess> = []
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
  }
  await Promise.all(running.splice(0).map((receiver) => receiver.close()))
})

const startWith = async (credentials: ReceiverConfig["credentials"], options: StartOptions = {}) => {
  const lines: Array<string> = []
  const events: Array<ReceivedEvent> = []
  const receiver = await start(
    { ...base, credentials },
    {
      log: (line) => lines.push(line),
      onEvent: (event) => {
        events.push(event)
        return options.onEvent?.(event)
      }
    }
  )
  running.push(receiver)
  return { receiver, lines, events }
}

const post = (url: string, body: string, headers: Record<string, string>) =>
  fetch(`${url}/hooks`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })

const deliveryHeaders = (deliveryId: string, type = "tour-created") => ({
  "x-delivery-id": deliveryId,
  "x-event-id": "evt_1q5pzf2a00k3m9v7x4c8d6b2ne",
  "x-event-type": type,
  "x-delivery-attempt": "1"
})

describe("example receiver (HMAC)", () => {
  it("verifies a delivery signed by the package, logs it once and drops the repeat", async () => {
    const { receiver, lines, events } = await startWith({ type: "hmac", secret: Redacted.make(secret) })
    assert.match(receiver.url, /^http:\/\/127\.0\.0\.1:\d+$/)
    const body = envelope()
    const signed = Hmac.signatureHeaders(secret, nowSeconds(), body)
    const first = await post(receiver.url, body, { ...deliveryHeaders("dlv_a"), ...signed })
    assert.strictEqual(first.status, 200)
    assert.deepStrictEqual(await first.json(), { status: "received" })
    // The service's retry: same body and X-Delivery-Id, fresh timestamp and signature.
    const retry = await post(receiver.url, body, {
      ...deliveryHeaders("dlv_a"),
      "x-delivery-attempt": "2",
      ...Hmac.signatureHeaders(secret, nowSeconds(), body)
    })
    assert.strictEqual(retry.status, 200)
    assert.deepStrictEqual(await retry.json(), { status: "duplicate" })
    assert.deepStrictEqual(lines, [
      "event=tour-created delivery=dlv_a verified=hmac",
      "event=tour-created delivery=dlv_a verified=hmac duplicate=true"
    ])
    assert.strictEqual(events.length, 1)
    assert.deepInclude(events[0]!, { deliveryId: "dlv_a", attempt: 1, verifiedBy: "hmac", type: "tour-created" })
    assert.isTrue(events[0]!.known)
    assert.strictEqual(events[0]!.text, body)
  })

  it("refuses tampered, stale, unsigned and wrongly keyed deliveries without recording them", async () => {
    const { receiver, lines, events } = await startWith({ type: "hmac", secret })
    const body = envelope()
    const signed = Hmac.signatureHeaders(secret, nowSeconds(), body)
    const cases: Array<[string, string, Record<string, string>]> = [
      ["SignatureMismatch", body.replace("planned", "started"), signed],
      ["TimestampTooOld", body, Hmac.signatureHeaders(secret, nowSeconds() - 3600, body)],
      ["TimestampTooNew", body, Hmac.signatureHeaders(secret, nowSeconds() + 3600, body)],
      ["SignatureMismatch", body, Hmac.signatureHeaders("another-secret-0123456789", nowSeconds(), body)],
      ["MissingHeader", body, {}],
      ["UnsupportedAlgorithm", body, { ...signed, "X-Signature-Algorithm": "hmac-sha1" }]
    ]
    for (const [reason, sent, headers] of cases) {
      const response = await post(receiver.url, sent, { ...deliveryHeaders("dlv_b"), ...headers })
      assert.strictEqual(response.status, 401, reason)
      assert.deepStrictEqual(await response.json(), { error: reason })
    }
    assert.strictEqual(events.length, 0)
    assert.isTrue(lines.every((line) => line.startsWith("rejected status=401 reason=")))
    assert.isTrue(lines.every((line) => !line.includes(secret)))
    // The refused attempts did not reach the deduplicator: the genuine delivery still counts.
    const genuine = await post(receiver.url, body, { ...deliveryHeaders("dlv_b"), ...signed })
    assert.deepStrictEqual(await genuine.json(), { status: "received" })
  })

  it("answers 400 without X-Delivery-Id, 413 for an oversized body, 405 for other methods", async () => {
    const { receiver, events } = await startWith({ type: "hmac", secret })
    const body = envelope()
    const signed = Hmac.signatureHeaders(secret, nowSeconds(), body)
    assert.strictEqual((await post(receiver.url, body, signed)).status, 400)
    const big = JSON.stringify({ filler: "x".repeat(70 * 1024) })
    const tooLarge = await post(receiver.url, big, {
      ...deliveryHeaders("dlv_c"),
      ...Hmac.signatureHeaders(secret, nowSeconds(), big)
    })
    assert.strictEqual(tooLarge.status, 413)
    assert.strictEqual((await fetch(`${receiver.url}/hooks`)).status, 405)
    assert.strictEqual((await fetch(`${receiver.url}/health`)).status, 200)
    assert.strictEqual(events.length, 0)
  })

  it("accepts an authentic event of a type it does not know, and says so", async () => {
    const { receiver, lines, events } = await startWith({ type: "hmac", secret })
    const body = envelope("tour-teleported")
    const response = await post(receiver.url, body, {
      ...deliveryHeaders("dlv_d", "tour-teleported"),
      ...Hmac.signatureHeaders(secret, nowSeconds(), body)
    })
    assert.strictEqual(response.status, 200)
    assert.deepStrictEqual(lines, ["event=tour-teleported delivery=dlv_d verified=hmac schema=unknown"])
    assert.isFalse(events[0]!.known)
  })

  it("forgets a delivery whose processing failed, so the retry is processed", async () => {
    let failures = 1
    const { receiver, lines } = await startWith(
      { type: "hmac", secret },
      {
        onEvent: () => {
          if (failures-- > 0) throw new Error("database down")
        }
      }
    )
    const body = envelope()
    const send = () =>
      post(receiver.url, body, { ...deliveryHeaders("dlv_e"), ...Hmac.signatureHeaders(secret, nowSeconds(), body) })
    assert.strictEqual((await send()).status, 500)
    assert.strictEqual((await send()).status, 200)
    assert.deepStrictEqual(lines, [
      "failed event=tour-created delivery=dlv_e (database down)",
      "event=tour-created delivery=dlv_e verified=hmac"
    ])
  })
})

describe("example receiver (Standard Webhooks)", () => {
  const whsec = `whsec_${Buffer.alloc(32, 9).toString("base64")}`

  it("verifies the standard-webhooks scheme and refuses another secret or the Waybill headers", async () => {
    const { receiver, lines, events } = await startWith({
      type: "hmac",
      secret: Redacted.make(whsec),
      scheme: "standard-webhooks"
    })
    const body = envelope()
    const signed = StandardWebhooks.signatureHeaders(whsec, "dlv_s", nowSeconds(), body)
    const ok = await post(receiver.url, body, { ...deliveryHeaders("dlv_s"), ...signed })
    assert.strictEqual(ok.status, 200)
    const other = `whsec_${Buffer.alloc(32, 8).toString("base64")}`
    const forged = await post(receiver.url, body, {
      ...deliveryHeaders("dlv_t"),
      ...StandardWebhooks.signatureHeaders(other, "dlv_t", nowSeconds(), body)
    })
    assert.strictEqual(forged.status, 401)
    const waybill = await post(receiver.url, body, {
      ...deliveryHeaders("dlv_u"),
      ...Hmac.signatureHeaders(whsec, nowSeconds(), body)
    })
    assert.strictEqual(waybill.status, 401)
    assert.strictEqual(lines[0], "event=tour-created delivery=dlv_s verified=standard-webhooks")
    assert.match(lines[1]!, /^rejected status=401 reason=SignatureMismatch/)
    assert.match(lines[2]!, /^rejected status=401 reason=MissingHeader/)
    assert.deepStrictEqual(
      events.map((event) => event.verifiedBy),
      ["standard-webhooks"]
    )
  })

  it("reads the scheme from RECEIVER_SIGNATURE_SCHEME", () => {
    const config = fromEnv({ RECEIVER_SECRET: whsec, RECEIVER_SIGNATURE_SCHEME: "standard-webhooks" })
    assert.isTrue(Either.isRight(config))
    if (Either.isRight(config)) {
      const credentials = config.right.credentials
      assert.strictEqual(credentials.type === "hmac" && credentials.scheme, "standard-webhooks")
    }
    assert.isTrue(Either.isLeft(fromEnv({ RECEIVER_SECRET: whsec, RECEIVER_SIGNATURE_SCHEME: "svix" })))
  })
})

describe("example receiver (Basic, Bearer)", () => {
  it("verifies Basic credentials", async () => {
    const { receiver, lines } = await startWith({ type: "basic", username: "ops", password: "pässwörd-€" })
    const body = envelope()
    const ok = await post(receiver.url, body, {
      ...deliveryHeaders("dlv_f"),
      authorization: Authorization.basicAuthorization("ops", "pässwörd-€")
    })
    assert.strictEqual(ok.status, 200)
    const wrong = await post(receiver.url, body, {
      ...deliveryHeaders("dlv_g"),
      authorization: Authorization.basicAuthorization("ops", "password")
    })
    assert.strictEqual(wrong.status, 401)
    assert.deepStrictEqual(lines, [
      "event=tour-created delivery=dlv_f verified=basic",
      "rejected status=401 reason=CredentialsMismatch (Basic credentials do not match the configured ones)"
    ])
  })

  it("verifies a Bearer token", async () => {
    const { receiver, lines } = await startWith({ type: "bearer", token: "tok_0123456789" })
    const body = envelope()
    const ok = await post(receiver.url, body, {
      ...deliveryHeaders("dlv_h"),
      authorization: Authorization.bearerAuthorization("tok_0123456789")
    })
    assert.strictEqual(ok.status, 200)
    const none = await post(receiver.url, body, deliveryHeaders("dlv_i"))
    assert.strictEqual(none.status, 401)
    assert.deepStrictEqual(lines, [
      "event=tour-created delivery=dlv_h verified=bearer",
      "rejected status=401 reason=MissingHeader (Header Authorization is missing)"
    ])
  })
})

describe("example receiver during a secret rotation", () => {
  it("accepts the current and the previous secret (RECEIVER_PREVIOUS_SECRET), and nothing else", async () => {
    const config = fromEnv({ RECEIVER_SECRET: "whk-new-secret-0123456789", RECEIVER_PREVIOUS_SECRET: secret })
    if (Either.isLeft(config)) return assert.fail(config.left)
    assert.notInclude(JSON.stringify(config.right), secret)
    const { receiver, lines } = await startWith(config.right.credentials)
    const body = envelope()
    const sent = async (id: string, secrets: Hmac.Secrets) =>
      (
        await post(receiver.url, body, {
          ...deliveryHeaders(id),
          ...Hmac.signatureHeaders(secrets, nowSeconds(), body)
        })
      ).status
    assert.strictEqual(await sent("dlv_old", secret), 200)
    assert.strictEqual(await sent("dlv_new", "whk-new-secret-0123456789"), 200)
    // The service's own overlap: both signatures in one header.
    assert.strictEqual(await sent("dlv_both", ["whk-new-secret-0123456789", secret]), 200)
    assert.strictEqual(await sent("dlv_other", "whk-other-secret-0123456789"), 401)
    assert.deepStrictEqual(
      lines.at(-1),
      "rejected status=401 reason=SignatureMismatch (Signature does not match the body, timestamp and secret)"
    )
  })

  it("accepts the previous Bearer token or Basic password beside the current one", async () => {
    const bearer = fromEnv({ RECEIVER_AUTH: "bearer", RECEIVER_TOKEN: "tok-new", RECEIVER_PREVIOUS_TOKEN: "tok-old" })
    if (Either.isLeft(bearer)) return assert.fail(bearer.left)
    const { receiver } = await startWith(bearer.right.credentials)
    const body = envelope()
    for (const [token, status] of [
      ["tok-new", 200],
      ["tok-old", 200],
      ["tok-other", 401]
    ] as const) {
      const reply = await post(receiver.url, body, {
        ...deliveryHeaders(`dlv_${token}`),
        authorization: Authorization.bearerAuthorization(token)
      })
      assert.strictEqual(reply.status, status, token)
    }
    const basic = fromEnv({
      RECEIVER_AUTH: "basic",
      RECEIVER_USERNAME: "ops",
      RECEIVER_PASSWORD: "new-pass",
      RECEIVER_PREVIOUS_PASSWORD: ""
    })
    assert.deepStrictEqual(basic, Either.left("RECEIVER_PREVIOUS_PASSWORD: must not be empty"))
  })
})

describe("example receiver configuration", () => {
  it("reads defaults and every setting from the environment", () => {
    const config = fromEnv({ RECEIVER_SECRET: secret })
    assert.isTrue(Either.isRight(config))
    if (Either.isRight(config)) {
      assert.deepInclude(config.right, { host: "127.0.0.1", port: 3001, toleranceSeconds: 300, dedupCapacity: 10_000 })
      assert.strictEqual(config.right.credentials.type, "hmac")
      // Secrets are Redacted: printing the config does not show them.
      assert.notInclude(JSON.stringify(config.right), secret)
      assert.notInclude(String(config.right.credentials.type === "hmac" && config.right.credentials.secret), secret)
    }
    const bearer = fromEnv({ RECEIVER_AUTH: "bearer", RECEIVER_TOKEN: "tok", PORT: "0", HOST: "::1" })
    assert.isTrue(Either.isRight(bearer) && bearer.right.port === 0 && bearer.right.host === "::1")
  })

  it("reports every missing or invalid variable at once, never a value", () => {
    const config = fromEnv({ RECEIVER_AUTH: "basic", RECEIVER_PASSWORD: "", PORT: "http" })
    assert.deepStrictEqual(
      config,
      Either.left(
        'PORT: Expected an integer value but received "http"; RECEIVER_USERNAME: is required; RECEIVER_PASSWORD: must not be empty'
      )
    )
    assert.deepStrictEqual(fromEnv({}), Either.left("RECEIVER_SECRET: is required"))
  })
})

describe("example receiver as a process", () => {
  it("starts from the environment, prints its address and one line per verified event", async () => {
    const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))
    const child = spawn(process.execPath, ["--conditions=@waybill/source", "--import", "tsx", main], {
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", RECEIVER_AUTH: "hmac", RECEIVER_SECRET: secret },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    let output = ""
    let errors = ""
    const waiting = new Set<() => void>()
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk
      for (const check of waiting) check()
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      errors += chunk
    })
    const exited = once(child, "exit")
    // Resolves (never rejects) on exit, so a race lost to a match leaves no unhandled rejection.
    const died = exited.then(([code]) => new Error(`receiver exited with ${code}: ${output}${errors}`))
    const lineMatching = async (pattern: RegExp): Promise<RegExpMatchArray> => {
      const result = await Promise.race([
        new Promise<RegExpMatchArray>((resolve) => {
          const check = () => {
            const match = output.match(pattern)
            if (match) {
              waiting.delete(check)
              resolve(match)
            }
          }
          waiting.add(check)
          check()
        }),
        died
      ])
      if (result instanceof Error) throw result
      return result
    }
    try {
      const [, url] = await lineMatching(/receiver listening on (http:\/\/\S+) \(auth: hmac\)/)
      const body = envelope()
      const response = await post(url!, body, {
        ...deliveryHeaders("dlv_process"),
        ...Hmac.signatureHeaders(secret, nowSeconds(), body)
      })
      assert.strictEqual(response.status, 200)
      await lineMatching(/event=tour-created delivery=dlv_process verified=hmac\n/)
    } finally {
      child.kill("SIGTERM")
      await exited
    }
  })
})
