import { assert, describe, it } from "@effect/vitest"
import { Either, Redacted } from "effect"
import * as fc from "fast-check"
import * as Authorization from "../src/Authorization.js"

// Control characters other than HTAB, which cannot travel in a header value.
const hasControl = (value: string) => [...value].some((c) => (c < " " && c !== "\t") || c === "\u007f")

const tagOf = <A, E extends { readonly _tag: string }>(result: Either.Either<A, E>): string =>
  Either.isLeft(result) ? result.left._tag : "Right"

describe("Authorization.basicAuthorization", () => {
  it("encodes UTF-8 username:password in Base64 (RFC 7617)", () => {
    assert.strictEqual(Authorization.basicAuthorization("Aladdin", "open sesame"), "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
    // RFC 7617 §2.1: the charset="UTF-8" example.
    assert.strictEqual(Authorization.basicAuthorization("test", "123£"), "Basic dGVzdDoxMjPCow==")
    assert.strictEqual(
      Authorization.basicAuthorization("ops", Redacted.make("pässwörd-€")),
      "Basic b3BzOnDDpHNzd8O2cmQt4oKs"
    )
  })

  it("refuses a colon in the username and control characters", () => {
    assert.throws(() => Authorization.basicAuthorization("a:b", "c"), RangeError)
    assert.throws(() => Authorization.basicAuthorization("ops", "line\nbreak"), RangeError)
    // A colon in the password is fine: the receiver splits at the first colon.
    assert.strictEqual(
      Buffer.from(Authorization.basicAuthorization("ops", "a:b").slice(6), "base64").toString("utf8"),
      "ops:a:b"
    )
  })
})

describe("Authorization.bearerAuthorization", () => {
  it("prefixes the token", () => {
    assert.strictEqual(Authorization.bearerAuthorization("tok_123"), "Bearer tok_123")
    assert.strictEqual(Authorization.bearerAuthorization(Redacted.make("tok_123")), "Bearer tok_123")
  })

  it("refuses a token that cannot travel unchanged", () => {
    for (const bad of ["", " tok", "tok ", "tok\r\nX-Evil: 1", "t\u0000k"]) {
      assert.throws(() => Authorization.bearerAuthorization(bad), RangeError)
    }
  })
})

describe("Authorization.verifyBasic", () => {
  const expected = { username: "ops", password: Redacted.make("pässwörd-€") }

  it("accepts what basicAuthorization produced, for any credentials", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme" }).filter((s) => !s.includes(":") && !hasControl(s)),
        fc.string({ unit: "grapheme" }).filter((s) => !hasControl(s)),
        (username, password) => {
          const headers = { authorization: Authorization.basicAuthorization(username, password) }
          const result = Authorization.verifyBasic(headers, { username, password })
          return Either.isRight(result) && result.right.username === username
        }
      )
    )
  })

  it("accepts the scheme in any case, with Fetch headers", () => {
    const headers = new Headers({ Authorization: "basic b3BzOnDDpHNzd8O2cmQt4oKs" })
    assert.deepStrictEqual(
      Authorization.verifyBasic(headers, expected),
      Either.right({ method: "basic", username: "ops" })
    )
  })

  it("refuses wrong, missing and malformed credentials with distinct errors", () => {
    const wrong = Authorization.basicAuthorization("ops", "pässwörd-$")
    assert.strictEqual(tagOf(Authorization.verifyBasic({ authorization: wrong }, expected)), "CredentialsMismatch")
    const other = Authorization.basicAuthorization("admin", "pässwörd-€")
    assert.strictEqual(tagOf(Authorization.verifyBasic({ authorization: other }, expected)), "CredentialsMismatch")
    assert.strictEqual(tagOf(Authorization.verifyBasic({}, expected)), "MissingHeader")
    for (const bad of ["Bearer abc", "Basic", "Basic !!!", "Basic b3Bz", "Digest b3BzOnB3"]) {
      assert.strictEqual(tagOf(Authorization.verifyBasic({ authorization: bad }, expected)), "MalformedHeader", bad)
    }
  })
})

describe("Authorization.verifyBearer", () => {
  it("accepts the configured token and refuses others", () => {
    const token = Redacted.make("tok_0123456789")
    assert.deepStrictEqual(
      Authorization.verifyBearer({ Authorization: "Bearer tok_0123456789" }, token),
      Either.right({ method: "bearer" })
    )
    assert.strictEqual(
      tagOf(Authorization.verifyBearer({ authorization: "Bearer tok_012345678" }, token)),
      "CredentialsMismatch"
    )
    assert.strictEqual(
      tagOf(Authorization.verifyBearer({ authorization: "Bearer tok_01234567890" }, token)),
      "CredentialsMismatch"
    )
    assert.strictEqual(
      tagOf(Authorization.verifyBearer({ authorization: "Basic tok_0123456789" }, token)),
      "MalformedHeader"
    )
    assert.strictEqual(tagOf(Authorization.verifyBearer({ authorization: "Bearer " }, token)), "MalformedHeader")
    assert.strictEqual(tagOf(Authorization.verifyBearer({}, token)), "MissingHeader")
  })

  it("keeps the token out of its errors", () => {
    const result = Authorization.verifyBearer({ authorization: "Bearer guess" }, "tok_0123456789")
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) {
      assert.notInclude(`${result.left.message} ${JSON.stringify(result.left)}`, "tok_0123456789")
    }
  })
})
