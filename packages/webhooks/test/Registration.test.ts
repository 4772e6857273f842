import { assert, describe, it } from "@effect/vitest"
import type { Issue } from "@waybill/core/Issue"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { hostToResolve, type RegistrationContext, validateRegistration } from "../src/Registration.js"
import { definitions, hmacAuth, leakedSecrets, registration, secrets } from "./fixtures.js"

const context: RegistrationContext = { propertyDefinitions: definitions, allowPrivateTargets: false }

const issuesOf = (input: unknown, ctx: RegistrationContext = context): ReadonlyArray<Issue> =>
  Either.match(validateRegistration(input, ctx), { onLeft: (issues) => issues, onRight: () => [] })

const pathsOf = (input: unknown, ctx?: RegistrationContext) => issuesOf(input, ctx).map((issue) => issue.path)

describe("validateRegistration", () => {
  it("accepts a complete registration, fills in match and wraps the secret", () => {
    const result = validateRegistration(
      registration({
        events: ["tour-created", "tour-action-created"],
        filters: {
          "tour-action-created": {
            conditions: [{ field: "action.payload.type", operator: "equals", value: "advance" }]
          }
        },
        description: "ops board"
      }),
      context
    )
    assert.isTrue(Either.isRight(result))
    if (Either.isLeft(result)) return
    assert.strictEqual(result.right.url, "https://hooks.example.org/waybill")
    assert.deepStrictEqual(result.right.events, ["tour-created", "tour-action-created"])
    assert.deepStrictEqual(result.right.filters, {
      "tour-action-created": {
        match: "all",
        conditions: [{ field: "action.payload.type", operator: "equals", value: "advance" }]
      }
    })
    assert.strictEqual(result.right.description, "ops board")
    assert.strictEqual(result.right.auth.type, "hmac")
    if (result.right.auth.type === "hmac") {
      assert.isTrue(Redacted.isRedacted(result.right.auth.secret))
      assert.strictEqual(Redacted.value(result.right.auth.secret), secrets.hmac)
    }
    assert.deepStrictEqual(leakedSecrets([JSON.stringify(result.right), String(result.right.auth)]), [])
  })

  it("accepts each auth type and no filters or description", () => {
    for (const auth of [
      { type: "basic", username: "ops", password: "p" },
      { type: "bearer", token: "t" },
      { type: "hmac", secret: "x".repeat(16) },
      { type: "hmac", secret: "x".repeat(512) },
      { type: "hmac", secret: "x".repeat(16), scheme: "waybill" },
      { type: "hmac", secret: `whsec_${Buffer.alloc(24, 7).toString("base64")}`, scheme: "standard-webhooks" },
      { type: "hmac", secret: `whsec_${Buffer.alloc(64, 7).toString("base64")}`, scheme: "standard-webhooks" }
    ]) {
      const result = validateRegistration(registration({ auth }), context)
      assert.isTrue(Either.isRight(result), auth.type)
      if (Either.isRight(result)) {
        assert.deepStrictEqual(result.right.filters, {})
        assert.strictEqual(result.right.description, null)
      }
    }
  })

  it("reports every problem at once, each with its path", () => {
    const issues = issuesOf({
      url: "http://hooks.example.org/x",
      events: ["tour-created", "no-such-event", "tour-created"],
      filters: {
        "tour-created": { match: "all", conditions: [{ field: "tour.nope", operator: "equals", value: "x" }] },
        "tour-completed": { conditions: [{ field: "tour.status", operator: "equals", value: "done" }] },
        "not-an-event": {}
      },
      auth: { type: "hmac", secret: "short" },
      description: 7,
      extra: true
    })
    assert.deepStrictEqual(
      issues.map((issue) => issue.path),
      [
        "extra",
        "url",
        "events.1",
        "events.2",
        "filters.tour-created.conditions.0.field",
        "filters.tour-completed",
        "filters.not-an-event",
        "auth.secret",
        "description"
      ]
    )
    assert.deepStrictEqual(issues[3], { path: "events.2", message: "duplicates events.0" })
    assert.deepStrictEqual(issues[5], {
      path: "filters.tour-completed",
      message: "is not one of the subscribed events"
    })
  })

  it("requires url, events and auth", () => {
    assert.deepStrictEqual(issuesOf({}), [
      { path: "url", message: "is required" },
      { path: "events", message: "is required" },
      { path: "auth", message: "is required" }
    ])
    assert.deepStrictEqual(issuesOf(null), [{ path: "", message: "must be a JSON object" }])
    assert.deepStrictEqual(pathsOf(registration({ events: [] })), ["events"])
    assert.deepStrictEqual(pathsOf(registration({ events: "tour-created" })), ["events"])
  })

  describe("url", () => {
    it("must be an absolute https URL without credentials, fragment or white space", () => {
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [42, "must be a string"],
        ["hooks.example.org/x", "must be an absolute URL"],
        ["ftp://hooks.example.org/x", "must be an https:// URL"],
        [
          "http://hooks.example.org/x",
          "must use https:// (http:// targets: WAYBILL_ALLOW_PRIVATE_TARGETS=true allows them, for development and tests only)"
        ],
        ["https://user:pw@hooks.example.org/x", "must not contain credentials; use auth instead"],
        ["https://hooks.example.org/x#frag", "must not contain a fragment (#…)"],
        [" https://hooks.example.org/x", "must not contain white space or control characters"],
        ["https://hooks.exam\tple.org/x", "must not contain white space or control characters"],
        [`https://hooks.example.org/${"a".repeat(2048)}`, "must be at most 2048 characters"]
      ]
      for (const [url, message] of cases) {
        assert.deepStrictEqual(issuesOf(registration({ url })), [{ path: "url", message }], String(url))
      }
    })

    it("refuses IP-literal and localhost targets outside the global address space", () => {
      for (const url of [
        "https://127.0.0.1/x",
        "https://127.1/x",
        "https://0x7f000001/x",
        "https://2130706433/x",
        "https://10.1.2.3/x",
        "https://169.254.169.254/latest/meta-data",
        "https://100.64.1.1/x",
        "https://[::1]/x",
        "https://[::ffff:127.0.0.1]/x",
        "https://[::ffff:169.254.169.254]/x",
        "https://[fd00::1]/x",
        "https://[fe80::1]/x",
        "https://[ff02::1]/x",
        "https://0.0.0.0/x",
        "https://localhost/x",
        "https://api.localhost:8443/x"
      ]) {
        const issues = issuesOf(registration({ url }))
        assert.strictEqual(issues.length, 1, url)
        assert.strictEqual(issues[0]!.path, "url")
        assert.match(issues[0]!.message, /^must not target /, url)
        assert.include(issues[0]!.message, "(WAYBILL_ALLOW_PRIVATE_TARGETS=true allows them", url)
      }
      assert.match(issuesOf(registration({ url: "https://169.254.169.254/" }))[0]!.message, /cloud metadata/)
      assert.deepStrictEqual(issuesOf(registration({ url: "https://93.184.215.14/x" })), [])
      assert.deepStrictEqual(issuesOf(registration({ url: "https://[2606:4700:4700::1111]/x" })), [])
    })

    it("refuses a name that resolves to any refused address; accepts one that does not resolve", () => {
      const input = registration({ url: "https://rebind.example.org/x" })
      assert.deepStrictEqual(issuesOf(input, { ...context, resolvedAddresses: ["93.184.215.14"] }), [])
      assert.deepStrictEqual(issuesOf(input, { ...context, resolvedAddresses: [] }), [])
      assert.deepStrictEqual(issuesOf(input), [])
      const refused = issuesOf(input, { ...context, resolvedAddresses: ["93.184.215.14", "10.0.0.5"] })
      assert.strictEqual(refused.length, 1)
      assert.match(refused[0]!.message, /^resolves to a private address \(10\.0\.0\.5\)/)
    })

    it("allows http and private targets when the server allows them", () => {
      const allowing = { ...context, allowPrivateTargets: true }
      for (const url of ["http://127.0.0.1:8080/x", "https://localhost/x", "http://[::1]/x", "https://10.0.0.1/"]) {
        assert.deepStrictEqual(issuesOf(registration({ url }), allowing), [], url)
      }
      assert.deepStrictEqual(pathsOf(registration({ url: "ftp://127.0.0.1/" }), allowing), ["url"])
    })

    it("names the host to resolve only when it is a name", () => {
      assert.deepStrictEqual(hostToResolve(registration()), Option.some("hooks.example.org"))
      assert.deepStrictEqual(hostToResolve(registration({ url: "https://[::1]/" })), Option.none())
      assert.deepStrictEqual(hostToResolve(registration({ url: "https://10.0.0.1/" })), Option.none())
      assert.deepStrictEqual(hostToResolve(registration({ url: "https://localhost/" })), Option.none())
      assert.deepStrictEqual(hostToResolve(registration({ url: "not a url" })), Option.none())
      assert.deepStrictEqual(hostToResolve({}), Option.none())
    })
  })

  describe("filters", () => {
    it("validates each filter against its event's fields, custom properties included", () => {
      const input = registration({
        events: ["tour-created", "tour-deleted"],
        filters: {
          "tour-created": {
            match: "any",
            conditions: [
              { field: "tour.properties.prop_region", operator: "is", value: "opt_nowhere" },
              { field: "tour.properties.prop_tags", operator: "is_set" },
              { field: "tour.properties.prop_weight", operator: "gt", value: "heavy" },
              { match: "all", conditions: [{ field: "tour.properties.prop_due", operator: "on", value: "2027-02-30" }] }
            ]
          },
          "tour-deleted": { conditions: [{ field: "tour.properties.prop_region", operator: "is", value: "opt_north" }] }
        }
      })
      assert.deepStrictEqual(pathsOf(input), [
        "filters.tour-created.conditions.0.value",
        "filters.tour-created.conditions.1.field",
        "filters.tour-created.conditions.2.value",
        "filters.tour-created.conditions.3.conditions.0.value",
        "filters.tour-deleted.conditions.0.field"
      ])
    })

    it("refuses empty groups and a filters value that is not an object", () => {
      assert.deepStrictEqual(pathsOf(registration({ filters: { "tour-created": { conditions: [] } } })), [
        "filters.tour-created.conditions"
      ])
      assert.deepStrictEqual(pathsOf(registration({ filters: [] })), ["filters"])
      assert.deepStrictEqual(pathsOf(registration({ filters: "x" })), ["filters"])
    })

    it("accepts the valid filters of every kind", () => {
      const input = registration({
        filters: {
          "tour-created": {
            conditions: [
              { field: "tour.status", operator: "not_equals", value: "cancelled" },
              { field: "tour.properties.prop_region", operator: "is_not", value: "opt_south" },
              { field: "tour.properties.prop_note", operator: "not_contains", value: "fragile" },
              { field: "tour.properties.prop_due", operator: "on_or_after", value: "2027-01-01" },
              { field: "tour.properties.prop_weight", operator: "lte", value: 12000 },
              { field: "tour.substatus", operator: "is_not_set" }
            ]
          }
        }
      })
      assert.deepStrictEqual(issuesOf(input), [])
    })
  })

  describe("auth", () => {
    it("needs a known type and exactly its fields", () => {
      assert.deepStrictEqual(issuesOf(registration({ auth: "hmac" })), [
        { path: "auth", message: "must be an object with a type: basic, bearer or hmac" }
      ])
      assert.deepStrictEqual(issuesOf(registration({ auth: { type: "digest" } })), [
        { path: "auth.type", message: "must be one of basic, bearer, hmac" }
      ])
      assert.deepStrictEqual(pathsOf(registration({ auth: { type: "basic" } })), ["auth.username", "auth.password"])
      assert.deepStrictEqual(pathsOf(registration({ auth: { type: "bearer" } })), ["auth.token"])
      assert.deepStrictEqual(pathsOf(registration({ auth: { ...hmacAuth, token: "x" } })), ["auth.token"])
    })

    it("checks lengths and characters without ever quoting the secret", () => {
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string, string]> = [
        [{ type: "hmac", secret: "x".repeat(15) }, "auth.secret", "must be 16 to 512 characters"],
        [{ type: "hmac", secret: "x".repeat(513) }, "auth.secret", "must be 16 to 512 characters"],
        [{ type: "hmac", secret: 1234567890123456 }, "auth.secret", "must be a string"],
        [
          { type: "hmac", secret: "x".repeat(32), scheme: "standard-webhooks" },
          "auth.secret",
          "must be whsec_ followed by base64 of 24 to 64 bytes for the standard-webhooks scheme"
        ],
        [
          { type: "hmac", secret: `whsec_${Buffer.alloc(23, 7).toString("base64")}`, scheme: "standard-webhooks" },
          "auth.secret",
          "must be whsec_ followed by base64 of 24 to 64 bytes for the standard-webhooks scheme"
        ],
        [
          { type: "hmac", secret: `whsec_${Buffer.alloc(65, 7).toString("base64")}`, scheme: "standard-webhooks" },
          "auth.secret",
          "must be whsec_ followed by base64 of 24 to 64 bytes for the standard-webhooks scheme"
        ],
        [
          { type: "hmac", secret: "x".repeat(16), scheme: "svix" },
          "auth.scheme",
          "must be waybill or standard-webhooks"
        ],
        [{ type: "bearer", token: "" }, "auth.token", "must be 1 to 512 characters"],
        [
          { type: "bearer", token: " padded " },
          "auth.token",
          "must not contain control characters or surrounding white space"
        ],
        [
          { type: "bearer", token: "a\nb" },
          "auth.token",
          "must not contain control characters or surrounding white space"
        ],
        [{ type: "basic", username: "ops", password: "" }, "auth.password", "must be 1 to 512 characters"],
        [{ type: "basic", username: "ops", password: "p".repeat(513) }, "auth.password", "must be 1 to 512 characters"],
        [
          { type: "basic", username: "ops", password: "a\u0000b" },
          "auth.password",
          "must not contain control characters"
        ],
        [{ type: "basic", username: "o:ps", password: "p" }, "auth.username", "must not contain a colon (RFC 7617)"],
        [{ type: "basic", username: "", password: "p" }, "auth.username", "must be 1 to 512 characters"]
      ]
      for (const [auth, path, message] of cases) {
        const issues = issuesOf(registration({ auth }))
        assert.deepStrictEqual(issues, [{ path, message }], JSON.stringify(auth))
      }
      // Characters, not UTF-16 units: 16 emoji make a valid secret.
      assert.deepStrictEqual(issuesOf(registration({ auth: { type: "hmac", secret: "🔑".repeat(16) } })), [])
      const leaky = issuesOf(
        registration({
          auth: { type: "basic", username: "ops", password: `${secrets.password}\u0007`, extra: secrets.token }
        })
      )
      assert.deepStrictEqual(leakedSecrets(leaky.map((issue) => `${issue.path} ${issue.message}`)), [])
    })
  })

  it("refuses text PostgreSQL could not store at its path, never quoting it", () => {
    const issues = issuesOf(registration({ description: "a\u0000b", auth: { type: "bearer", token: "tok\ud800en" } }))
    assert.deepStrictEqual(issues, [
      {
        path: "auth.token",
        message: "contains an unpaired surrogate (such as \\ud800 alone), which is not Unicode text"
      },
      { path: "description", message: "contains a NUL character (\\u0000), which cannot be stored" }
    ])
  })

  it("accepts a null description and refuses one that is too long", () => {
    assert.deepStrictEqual(issuesOf(registration({ description: null })), [])
    assert.deepStrictEqual(pathsOf(registration({ description: "d".repeat(1001) })), ["description"])
  })

  it("never descends into a deep value: 100,000 levels in every field are issues at those fields", () => {
    const levels = 100_000
    const arrays = JSON.parse(`${"[".repeat(levels)}${"]".repeat(levels)}`)
    const groups = JSON.parse(
      `${'{"conditions":['.repeat(levels)}{"field":"tour.status","operator":"equals","value":"x"}${"]}".repeat(levels)}`
    )
    const input = {
      url: arrays,
      events: ["tour-created", "tour-action-created"],
      filters: {
        "tour-created": groups,
        "tour-action-created": { conditions: [{ field: "action.payload.type", operator: "equals", value: arrays }] }
      },
      auth: { type: "hmac", secret: arrays },
      description: arrays,
      extra: arrays
    }
    assert.deepStrictEqual(pathsOf(input), [
      "extra",
      "url",
      "filters.tour-created.conditions.0.conditions.0.conditions.0.conditions.0.conditions.0",
      "filters.tour-action-created.conditions.0.value",
      "auth.secret",
      "description"
    ])
  })
})
