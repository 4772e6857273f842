/**
 * The configuration reports every bad or missing variable of a start at once, each naming its
 * variable, and never quotes a value back.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { config, describeError } from "../src/Config.js"

const problemsOf = (variables: Record<string, string>) =>
  Effect.runSync(
    Effect.either(config.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(variables))))))
  )

describe("Config", () => {
  it("reports a missing WAYBILL_SECRET_KEY with DATABASE_URL together with the other bad variables", () => {
    const result = problemsOf({
      DATABASE_URL: "postgres://postgres@127.0.0.1:5432/waybill",
      WAYBILL_API_KEYS: "acme:short",
      PORT: "99999"
    })
    assert.isTrue(Either.isLeft(result))
    if (Either.isRight(result)) return
    const variables = describeError(result.left).map((line) => line.slice(0, line.indexOf(":")))
    assert.sameMembers(variables, ["WAYBILL_API_KEYS", "PORT", "WAYBILL_SECRET_KEY"])
  })

  it("reads a good configuration, and the secret key is required only with DATABASE_URL", () => {
    assert.isTrue(Either.isRight(problemsOf({})))
    const postgres = { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/waybill" }
    assert.deepStrictEqual(
      Either.getLeft(problemsOf(postgres)).pipe((left) => left._tag === "Some" && describeError(left.value)),
      [
        "WAYBILL_SECRET_KEY: is required with DATABASE_URL: every process sharing the database must encrypt webhook secrets with the same key (generate one with: openssl rand -hex 32)"
      ]
    )
    assert.isTrue(Either.isRight(problemsOf({ ...postgres, WAYBILL_SECRET_KEY: "ab".repeat(32) })))
  })

  it("reads WAYBILL_LOG_FORMAT: text by default, json, and another value refused naming it", () => {
    const format = (variables: Record<string, string>) => Either.map(problemsOf(variables), (read) => read.logFormat)
    assert.deepStrictEqual(format({}), Either.right("text"))
    assert.deepStrictEqual(format({ WAYBILL_LOG_FORMAT: "json" }), Either.right("json"))
    const refused = problemsOf({ WAYBILL_LOG_FORMAT: "yaml" })
    assert.isTrue(Either.isLeft(refused))
    if (Either.isRight(refused)) return
    assert.deepStrictEqual(describeError(refused.left), [
      'WAYBILL_LOG_FORMAT: Expected one of (text, json) but received "yaml"'
    ])
  })

  it("reads WAYBILL_CONSOLE_FRAME_ANCESTORS as origins, none by default; a bad one names the variable", () => {
    const origins = (variables: Record<string, string>) =>
      Either.map(problemsOf(variables), (read) => read.consoleFrameAncestors)
    assert.deepStrictEqual(origins({}), Either.right([]))
    assert.deepStrictEqual(
      origins({ WAYBILL_CONSOLE_FRAME_ANCESTORS: " https://app.example.com  http://127.0.0.1:3004/ " }),
      Either.right(["https://app.example.com", "http://127.0.0.1:3004"])
    )
    for (const bad of ["https://app.example.com/settings", "app.example.com", "ftp://files.example", "'self'", "*"]) {
      const result = problemsOf({ WAYBILL_CONSOLE_FRAME_ANCESTORS: `https://ok.example ${bad}` })
      assert.isTrue(Either.isLeft(result), bad)
      if (Either.isLeft(result)) {
        const [line] = describeError(result.left)
        assert.match(line!, /^WAYBILL_CONSOLE_FRAME_ANCESTORS: .* is not an origin/, bad)
      }
    }
  })
})
