import { spawnSync } from "node:child_process"
import { createHmac } from "node:crypto"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as Authorization from "../src/Authorization.js"
import * as Hmac from "../src/Hmac.js"

// The vectors and the plain-crypto recipe live in the guide, so the guide cannot drift from the code.
const guide = readFileSync(new URL("../../../docs/receiving-webhooks.md", import.meta.url), "utf8")

const blockAfter = (marker: string): string => {
  const at = guide.indexOf(marker)
  assert.isAbove(at, -1, `marker ${marker} not found in docs/receiving-webhooks.md`)
  const match = guide.slice(at).match(/```[a-z]*\n([\s\S]*?)\n```/)
  assert.isNotNull(match)
  return match![1]!
}

interface HmacVector {
  readonly name: string
  readonly secret: string
  readonly timestamp: number
  readonly body: string
  readonly signature: string
}
interface BasicVector {
  readonly username: string
  readonly password: string
  readonly authorization: string
}
const vectors = JSON.parse(blockAfter("<!-- test-vectors -->")) as {
  readonly hmac: ReadonlyArray<HmacVector>
  readonly basic: ReadonlyArray<BasicVector>
}

// An independent computation: the openssl command line where available, else node:crypto.
const hasOpenssl = spawnSync("openssl", ["version"]).status === 0
const independent = (vector: HmacVector): string => {
  const message = Buffer.from(`${vector.timestamp}.${vector.body}`, "utf8")
  if (!hasOpenssl) return createHmac("sha256", Buffer.from(vector.secret, "utf8")).update(message).digest("hex")
  const result = spawnSync("openssl", ["dgst", "-sha256", "-hmac", vector.secret], { input: message })
  assert.strictEqual(result.status, 0, String(result.stderr))
  return String(result.stdout).trim().split(/\s+/).at(-1)!
}

const workDir = mkdtempSync(join(tmpdir(), "waybill-recipe-"))
afterAll(() => rm(workDir, { recursive: true, force: true }))

describe("test vectors of docs/receiving-webhooks.md", () => {
  it("has vectors, including a non-ASCII body", () => {
    assert.isAtLeast(vectors.hmac.length, 3)
    assert.isTrue(vectors.hmac.some((vector) => Buffer.byteLength(vector.body) > vector.body.length))
  })

  it(`match an independent computation (${hasOpenssl ? "openssl dgst -hmac" : "node:crypto"})`, () => {
    for (const vector of vectors.hmac) {
      assert.strictEqual(independent(vector), vector.signature, vector.name)
    }
  })

  it("match Hmac.sign and pass Hmac.verify; any change fails", () => {
    for (const vector of vectors.hmac) {
      assert.strictEqual(Hmac.sign(vector.secret, vector.timestamp, vector.body), vector.signature, vector.name)
      const headers = {
        "x-signature-algorithm": "hmac-sha256",
        "x-signature-timestamp": String(vector.timestamp),
        "x-signature": vector.signature
      }
      const at = (now: number, body = vector.body, secret = vector.secret) =>
        Hmac.verify({ secret, headers, rawBody: body, now })
      assert.deepStrictEqual(at(vector.timestamp), Either.right({ method: "hmac", timestamp: vector.timestamp }))
      assert.isTrue(Either.isRight(at(vector.timestamp + 299)))
      assert.isTrue(Either.isLeft(at(vector.timestamp + 301)))
      assert.isTrue(Either.isLeft(at(vector.timestamp, `${vector.body} `)))
      assert.isTrue(Either.isLeft(at(vector.timestamp, vector.body, `${vector.secret}!`)))
    }
  })

  it("pass the plain node:crypto recipe of the guide, which refuses changes too", async () => {
    const file = join(workDir, "verify-webhook.mjs")
    writeFileSync(file, blockAfter("<!-- recipe:node-crypto"))
    const recipe = (await import(pathToFileURL(file).href)) as {
      verifyWebhook: (
        secret: string | ReadonlyArray<string>,
        headers: Record<string, string>,
        rawBody: Buffer,
        now?: number,
        toleranceSeconds?: number
      ) => string | null
    }
    for (const vector of vectors.hmac) {
      const headers = {
        "x-signature-algorithm": "hmac-sha256",
        "x-signature-timestamp": String(vector.timestamp),
        "x-signature": vector.signature
      }
      const body = Buffer.from(vector.body, "utf8")
      assert.isNull(recipe.verifyWebhook(vector.secret, headers, body, vector.timestamp), vector.name)
      assert.strictEqual(
        recipe.verifyWebhook(`${vector.secret}!`, headers, body, vector.timestamp),
        "signature mismatch"
      )
      assert.strictEqual(
        recipe.verifyWebhook(vector.secret, headers, body, vector.timestamp + 301),
        "timestamp outside the replay window"
      )
      // The recipe and the package agree on what the package signs now.
      const fresh = Hmac.signatureHeaders(vector.secret, vector.timestamp + 60, body)
      const lower = Object.fromEntries(Object.entries(fresh).map(([name, value]) => [name.toLowerCase(), value]))
      assert.isNull(recipe.verifyWebhook(vector.secret, lower, body, vector.timestamp + 60))
      // During a rotation's overlap: two signatures, and a receiver holding two secrets.
      const both = Hmac.signatureHeaders(["another-secret-0123456789", vector.secret], vector.timestamp, body)
      const overlap = Object.fromEntries(Object.entries(both).map(([name, value]) => [name.toLowerCase(), value]))
      assert.isNull(recipe.verifyWebhook(vector.secret, overlap, body, vector.timestamp))
      assert.isNull(recipe.verifyWebhook(["a-third-secret-0123456", vector.secret], headers, body, vector.timestamp))
      assert.strictEqual(
        recipe.verifyWebhook("a-third-secret-0123456", overlap, body, vector.timestamp),
        "signature mismatch"
      )
      assert.strictEqual(
        recipe.verifyWebhook(
          vector.secret,
          { ...overlap, "x-signature": `${vector.signature}, nothex` },
          body,
          vector.timestamp
        ),
        "malformed signature"
      )
    }
  })

  it("Basic vectors match basicAuthorization and verifyBasic", () => {
    for (const vector of vectors.basic) {
      assert.strictEqual(Authorization.basicAuthorization(vector.username, vector.password), vector.authorization)
      const decoded = Buffer.from(vector.authorization.slice("Basic ".length), "base64").toString("utf8")
      assert.strictEqual(decoded, `${vector.username}:${vector.password}`)
      assert.isTrue(Either.isRight(Authorization.verifyBasic({ authorization: vector.authorization }, vector)))
    }
  })
})
