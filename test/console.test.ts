/**
 * The operator console in a real browser (Debian's Chromium through playwright-core), against a
 * real reference server on the embedded database and a local receiver: sign-in, a webhook with a
 * nested filter built in the page and read back through the API, deliveries in the page's log,
 * an edit that keeps the secret, the API's issues at their controls, delete with confirmation,
 * and the whole create flow by keyboard alone. Screenshots of the list, the filter builder and
 * the delivery log at 1280 px and 390 px go to `WAYBILL_SCREENSHOTS` (docs/images for the docs:
 * `npm run docs:screenshots`), else to a temporary directory.
 */
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import * as Server from "@waybill/server/Server"
import * as Hmac from "@waybill/signing/Hmac"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect, Either } from "effect"
import type { Page } from "playwright-core"
import { Webhook } from "standardwebhooks"
import {
  describeInBrowser,
  listLoaded,
  openPage,
  overflowsSideways,
  screenshots,
  signIn,
  tabTo,
  unlabelledControls
} from "./console-browser.js"
import { call, keys, serverLayer, testLog } from "./harness.js"
import { eventually, receiver } from "./receivers.js"

const pglite = Testing.backends()[0]!
const log = testLog("the server")
log.showOnFailure()
const secret = "console-hmac-secret-0001"

// What the page is asked to build: every kind of condition the acceptance names.
const intendedFilter = {
  match: "all",
  conditions: [
    { field: "action.payload.type", operator: "not_equals", value: "reset" },
    {
      match: "any",
      conditions: [
        { field: "tour.properties.prop_region", operator: "is", value: "opt_north" },
        { field: "tour.triggerDate", operator: "on_or_after", value: "2027-01-01" }
      ]
    }
  ]
}

const tourAction = (type: string, region: string) => ({
  type: "tour-action-created",
  payload: {
    tour: {
      id: `tour_console_${type}`,
      status: "planned",
      substatus: null,
      triggerDate: "2026-12-01",
      properties: { prop_region: region }
    },
    action: {
      id: `act_console_${type}`,
      payload: { type },
      createdAt: 1_798_000_000,
      createdAtMilliseconds: 1_798_000_000_000
    }
  }
})

const page = async (base: string, width = 1280) => openPage(new URL(base).origin, width)

// Fills the create form for an HMAC webhook on tour-action-created with the intended filter.
const buildWebhook = async (p: Page, url: string) => {
  await p.getByRole("link", { name: "New webhook" }).click()
  await p.getByLabel("URL", { exact: true }).fill(url)
  await p.getByLabel("Description (optional)").fill("ops board")
  await p.getByLabel("Search event types").fill("tour action")
  await p.getByLabel("tour-action-created").check()
  await p.getByLabel("Shared secret").fill(secret)
  await p.getByRole("button", { name: "Add a filter for tour-action-created" }).click()
  const top = p.locator(".event-filter .filter-group.depth-1")
  await top.getByLabel("Field").first().selectOption("action.payload.type")
  await top.getByLabel("Operator").first().selectOption({ label: "does not equal" })
  await top
    .getByLabel(/^Value/)
    .first()
    .fill("reset")
  await top.getByRole("button", { name: "Add group" }).last().click()
  const group = p.locator(".filter-group.depth-2")
  await group.getByLabel("Match").selectOption("any")
  await group.getByLabel("Field").first().selectOption("tour.properties.prop_region")
  await group
    .getByLabel(/^Value/)
    .first()
    .selectOption({ label: "North" })
  await group.getByRole("button", { name: "Add condition" }).click()
  await group.getByLabel("Field").nth(1).selectOption("tour.triggerDate")
  await group.getByLabel("Operator").nth(1).selectOption({ label: "is on or after" })
  await group
    .getByLabel(/^Value/)
    .nth(1)
    .fill("2027-01-01")
}

describeInBrowser("operator console in a browser", () => {
  layer(serverLayer(pglite, {}, {}, log), { timeout: "120 seconds", excludeTestServices: true })(
    "console [pglite]",
    (it) => {
      it.effect(
        "GET /console and its assets answer without a key, from this origin only; the route is not in /openapi.json",
        () =>
          Effect.gen(function* () {
            const base = yield* Server.baseUrl
            for (const path of ["/console", "/console/", "/console/assets/app.js", "/console/assets/app.css"]) {
              const response = yield* Effect.promise(() => fetch(`${base}${path}`))
              assert.strictEqual(response.status, 200, path)
              assert.include(response.headers.get("content-security-policy") ?? "", "default-src 'none'")
            }
            const paths = Object.keys((yield* call("/openapi.json")).body.paths)
            assert.isFalse(
              // The console's own routes; minting console tokens (/console/tokens) is public API.
              paths.some((path) => path.startsWith("/console/api")),
              paths.join(", ")
            )
          })
      )

      it.effect(
        "sign-in: a wrong key is refused at its field; the key lives in sessionStorage only; sign-out forgets it",
        () =>
          Effect.gen(function* () {
            const base = yield* Server.baseUrl
            yield* Effect.promise(async () => {
              const { page: p, assertClean } = await page(base)
              await p.goto(`${base}/console`)
              await p.getByLabel("API key").fill("not-a-key")
              await p.getByRole("button", { name: "Sign in" }).click()
              await p.getByText("This API key was not accepted.").waitFor()
              await signIn(p, base, keys.a)
              const stored = await p.evaluate(() => ({
                session: Object.values(sessionStorage),
                local: Object.keys(localStorage).length,
                cookies: document.cookie
              }))
              assert.deepStrictEqual(stored, { session: [keys.a], local: 0, cookies: "" })
              assert.notInclude(p.url(), keys.a)
              await p.reload()
              await p.getByRole("heading", { name: "Webhooks", exact: true }).waitFor()
              await p.getByRole("button", { name: "Sign out" }).click()
              await p.getByLabel("API key").waitFor()
              assert.deepStrictEqual(await p.evaluate(() => Object.keys(sessionStorage)), [])
              assertClean([/status of 401/])
            })
          })
      )

      it.effect(
        "a webhook built in the page (nested filter) reads back as meant; one matching event of two is in the page's log; an edit keeps the secret",
        () =>
          Effect.gen(function* () {
            const base = yield* Server.baseUrl
            const target = yield* receiver()
            const { page: p, assertClean } = yield* Effect.promise(() => page(base))
            yield* Effect.promise(async () => {
              await signIn(p, base, keys.a)
              await buildWebhook(p, target.url)
              await p.screenshot({ path: join(screenshots, "filter-builder-1280.png"), fullPage: true })
              await p.getByRole("button", { name: "Create webhook" }).click()
              await p.getByRole("heading", { name: "Delivery log" }).waitFor()
            })
            const id = decodeURIComponent(/#\/webhooks\/([^/]+)$/.exec(p.url())![1]!)
            const stored = (yield* call(`/webhooks/${id}`, { key: keys.a })).body
            assert.deepStrictEqual(stored.filters, { "tour-action-created": intendedFilter })
            assert.deepStrictEqual(stored.auth, { type: "hmac", secret: "********", scheme: "waybill" })
            assert.strictEqual(stored.url, target.url)
            assert.strictEqual(stored.description, "ops board")

            const matching = yield* call("/events", { key: keys.a, json: tourAction("advance", "opt_north") })
            const skipped = yield* call("/events", { key: keys.a, json: tourAction("reset", "opt_north") })
            assert.strictEqual(matching.status, 202)
            assert.strictEqual(skipped.status, 202)
            yield* eventually(
              Effect.sync(() => target.received.length === 1),
              "the matching event's delivery"
            )
            yield* Effect.promise(async () => {
              await p.getByRole("button", { name: "Refresh" }).click()
              await p.locator(".delivery").first().waitFor()
              const cards = await p.locator(".delivery").allTextContents()
              assert.strictEqual(cards.length, 1, cards.join(" | "))
              assert.include(cards[0]!, "succeeded")
              assert.include(cards[0]!, "HTTP 200")
              await p.screenshot({ path: join(screenshots, "delivery-log-1280.png"), fullPage: true })

              await p.getByRole("link", { name: "Edit" }).click()
              await p.getByLabel("URL", { exact: true }).fill(`${target.url}/moved`)
              assert.strictEqual(await p.getByLabel("Shared secret").inputValue(), "")
              await p.getByRole("button", { name: "Save changes" }).click()
              await p.getByRole("heading", { name: "Delivery log" }).waitFor()
            })
            yield* call("/events", { key: keys.a, json: tourAction("arrive", "opt_north") })
            yield* eventually(
              Effect.sync(() => target.received.length === 2),
              "the delivery after the edit"
            )
            const moved = target.received[1]!
            assert.strictEqual(moved.path, "/moved")
            const verified = Hmac.verify({
              secret,
              headers: moved.headers as Record<string, string>,
              rawBody: moved.body,
              now: Number(moved.headers["x-signature-timestamp"])
            })
            assert.isTrue(Either.isRight(verified), "signed with the secret kept through the edit")
            assert.deepStrictEqual((yield* call(`/webhooks/${id}`, { key: keys.a })).body.filters, stored.filters)
            assertClean()
          }).pipe(Effect.scoped)
      )

      it.effect("the delivery log resends a failed delivery and replays failed ones since a time, by keyboard", () =>
        Effect.gen(function* () {
          const base = yield* Server.baseUrl
          let healthy = false
          const target = yield* receiver(() => ({ status: healthy ? 200 : 500 }))
          const webhook = (yield* call("/webhooks", {
            key: keys.a,
            json: { url: target.url, events: ["tour-created"], auth: { type: "hmac", secret } }
          })).body
          const publish = (id: string) =>
            Effect.map(
              call("/events", {
                key: keys.a,
                json: {
                  type: "tour-created",
                  payload: { tour: { id, status: "planned", substatus: null, properties: {} } }
                }
              }),
              (reply) => reply.body.id as string
            )
          const first = yield* publish("tour_console_resend_1")
          const second = yield* publish("tour_console_resend_2")
          const log = Effect.map(
            call(`/webhooks/${webhook.id}/deliveries`, { key: keys.a }),
            (reply) => reply.body.data as Array<{ id: string; eventId: string; status: string }>
          )
          yield* eventually(
            Effect.map(log, (data) => data.length === 2 && data.every((delivery) => delivery.status === "failed")),
            "both deliveries to fail"
          )
          healthy = true
          const firstDelivery = (yield* log).find((delivery) => delivery.eventId === first)!
          const { page: p, assertClean } = yield* Effect.promise(() => page(base))
          yield* Effect.promise(async () => {
            await signIn(p, base, keys.a)
            await p.evaluate((hash) => {
              location.hash = hash
            }, `#/webhooks/${webhook.id}`)
            await p.locator(".delivery").nth(1).waitFor()
            assert.deepStrictEqual(await unlabelledControls(p), [])
            await tabTo(p, `button[aria-label="Resend delivery ${firstDelivery.id}"]`)
            await p.keyboard.press("Enter")
            await p.getByText(`Delivery ${firstDelivery.id} is being sent again.`).waitFor()
          })
          yield* eventually(
            Effect.sync(() => target.for(first).length === 3),
            "the resent delivery"
          )
          assert.strictEqual(target.for(first)[2]!.headers["x-delivery-attempt"], "3")
          yield* Effect.promise(async () => {
            // The default window starts a day ago; only the still failed delivery is replayed.
            await tabTo(p, "button[type=submit]", "Replay failed deliveries")
            await p.keyboard.press("Enter")
            await p.getByText("1 failed delivery is being sent again.").waitFor()
          })
          yield* eventually(
            Effect.sync(() => target.for(second).length === 3),
            "the replayed delivery"
          )
          yield* Effect.promise(async () => {
            await p.getByRole("button", { name: "Refresh" }).click()
            await p.locator(".delivery .trigger").nth(1).waitFor()
            const cards = await p.locator(".delivery").allTextContents()
            assert.isTrue(
              cards.every((card) => card.includes("manual") && card.includes("HTTP 200")),
              cards.join(" | ")
            )
            assertClean()
          })
          assert.strictEqual(target.for(first).length, 3)
        }).pipe(Effect.scoped)
      )

      it.effect("the form registers a Standard Webhooks webhook, and an edit keeps its scheme and secret", () =>
        Effect.gen(function* () {
          const base = yield* Server.baseUrl
          const target = yield* receiver()
          const whsec = `whsec_${Buffer.alloc(32, 3).toString("base64")}`
          const { page: p, assertClean } = yield* Effect.promise(() => page(base))
          yield* Effect.promise(async () => {
            await signIn(p, base, keys.a)
            await p.getByRole("link", { name: "New webhook" }).click()
            await p.getByLabel("URL", { exact: true }).fill(target.url)
            await p.getByLabel("Search event types").fill("tour created")
            await p.getByLabel("tour-created", { exact: true }).check()
            await p.getByLabel("Signature scheme").selectOption("standard-webhooks")
            await p.getByLabel("Shared secret").fill(whsec)
            await p.getByRole("button", { name: "Create webhook" }).click()
            await p.getByRole("heading", { name: "Delivery log" }).waitFor()
            await p.getByText("hmac (standard-webhooks)").waitFor()
          })
          const id = decodeURIComponent(/#\/webhooks\/([^/]+)$/.exec(p.url())![1]!)
          const stored = (yield* call(`/webhooks/${id}`, { key: keys.a })).body
          assert.deepStrictEqual(stored.auth, { type: "hmac", secret: "********", scheme: "standard-webhooks" })
          yield* Effect.promise(async () => {
            await p.getByRole("link", { name: "Edit" }).click()
            assert.strictEqual(await p.getByLabel("Signature scheme").inputValue(), "standard-webhooks")
            await p.getByLabel("Description (optional)").fill("edited")
            await p.getByRole("button", { name: "Save changes" }).click()
            await p.getByRole("heading", { name: "Delivery log" }).waitFor()
          })
          const edited = (yield* call(`/webhooks/${id}`, { key: keys.a })).body
          assert.deepStrictEqual(edited.auth, stored.auth)
          assert.strictEqual(edited.description, "edited")
          const eventId = (yield* call("/events", {
            key: keys.a,
            json: {
              type: "tour-created",
              payload: { tour: { id: "tour_console_sw", status: "planned", substatus: null, properties: {} } }
            }
          })).body.id as string
          yield* eventually(
            Effect.sync(() => target.for(eventId).length === 1),
            "the delivery"
          )
          const [request] = target.for(eventId)
          const headers = Object.fromEntries(
            Object.entries(request!.headers).filter((entry): entry is [string, string] => typeof entry[1] === "string")
          )
          assert.doesNotThrow(() => new Webhook(whsec).verify(request!.body, headers))
          assertClean()
        }).pipe(Effect.scoped)
      )

      it.effect(
        "Rotate secret: an HMAC rotation shows its overlap's end and deliveries verify with both secrets; Bearer says it replaces at once",
        () =>
          Effect.gen(function* () {
            const base = yield* Server.baseUrl
            const target = yield* receiver()
            const rotatedSecret = "console-rotated-secret-0002"
            const webhook = (yield* call("/webhooks", {
              key: keys.a,
              json: { url: target.url, events: ["tour-created"], auth: { type: "hmac", secret } }
            })).body
            const { page: p, assertClean } = yield* Effect.promise(() => page(base))
            yield* Effect.promise(async () => {
              await signIn(p, base, keys.a)
              await p.evaluate((hash) => {
                location.hash = hash
              }, `#/webhooks/${webhook.id}`)
              await p.getByRole("heading", { name: "Delivery log" }).waitFor()
              // By keyboard: the action, then the dialog's first field has the focus.
              await tabTo(p, "button", "Rotate secret")
              await p.keyboard.press("Enter")
              const dialog = p.getByRole("dialog", { name: "Rotate secret" })
              await dialog.waitFor()
              assert.isTrue(
                await dialog.getByLabel("New shared secret").evaluate((input) => input === document.activeElement)
              )
              assert.deepStrictEqual(await unlabelledControls(p), [])
              assert.strictEqual(await dialog.getByLabel("The previous secret also signs for").inputValue(), "86400")
              await p.keyboard.type(rotatedSecret)
              await p.screenshot({ path: join(screenshots, "rotate-secret-1280.png"), fullPage: true })
              // The API's issue at its control.
              await dialog.getByLabel("New shared secret").fill("too short")
              await dialog.getByRole("button", { name: "Rotate secret" }).click()
              await dialog.locator("#control-auth_secret-error").waitFor()
              assert.strictEqual(await dialog.getByLabel("New shared secret").getAttribute("aria-invalid"), "true")
              await dialog.getByLabel("New shared secret").fill(rotatedSecret)
              await dialog.getByRole("button", { name: "Rotate secret" }).click()
              await dialog.waitFor({ state: "detached" })
              await p
                .getByText("The new secret signs every delivery from now on; the previous one also signs until")
                .waitFor()
              assert.match((await p.locator("dd.overlap").textContent()) ?? "", /^also signs until \d{4}-\d\d-\d\d /)
              await p.screenshot({ path: join(screenshots, "rotated-1280.png"), fullPage: true })
              assertClean([/status of 400/])
            })
            const stored = (yield* call(`/webhooks/${webhook.id}`, { key: keys.a })).body
            assert.approximately(stored.auth.previousSecretExpiresAt, Math.floor(Date.now() / 1000) + 86_400, 10)
            const eventId = (yield* call("/events", {
              key: keys.a,
              json: {
                type: "tour-created",
                payload: { tour: { id: "tour_console_rotated", status: "planned", substatus: null, properties: {} } }
              }
            })).body.id as string
            yield* eventually(
              Effect.sync(() => target.for(eventId).length === 1),
              "the delivery after the rotation"
            )
            const [request] = target.for(eventId)
            const verifies = (key: string) =>
              Either.isRight(
                Hmac.verify({
                  secret: key,
                  headers: request!.headers as Record<string, string>,
                  rawBody: request!.body,
                  now: Number(request!.headers["x-signature-timestamp"])
                })
              )
            assert.isTrue(verifies(rotatedSecret) && verifies(secret), "signed with the new and the previous secret")

            const bearer = (yield* call("/webhooks", {
              key: keys.a,
              json: { url: target.url, events: ["tour-deleted"], auth: { type: "bearer", token: "old-console-token" } }
            })).body
            yield* Effect.promise(async () => {
              await p.evaluate((hash) => {
                location.hash = hash
              }, `#/webhooks/${bearer.id}`)
              await p.getByRole("button", { name: "Rotate secret" }).click()
              const dialog = p.getByRole("dialog", { name: "Rotate secret" })
              assert.match(
                (await dialog.locator("#rotate-at-once").textContent()) ?? "",
                /The new token replaces the old at once/
              )
              assert.strictEqual(await dialog.getByLabel("The previous secret also signs for").count(), 0)
              await dialog.getByLabel("New token").fill("new-console-token")
              await dialog.getByRole("button", { name: "Rotate secret" }).click()
              await p.getByText("The new token replaced the old one").waitFor()
              assertClean([/status of 400/])
            })
            const deleted = yield* call("/events", {
              key: keys.a,
              json: { type: "tour-deleted", payload: { tourId: "tour_x" } }
            })
            yield* eventually(
              Effect.sync(() => target.for(deleted.body.id).length === 1),
              "the Bearer delivery"
            )
            assert.strictEqual(target.for(deleted.body.id)[0]!.headers.authorization, "Bearer new-console-token")
            yield* call(`/webhooks/${webhook.id}`, { key: keys.a, method: "DELETE" })
            yield* call(`/webhooks/${bearer.id}`, { key: keys.a, method: "DELETE" })
          }).pipe(Effect.scoped)
      )

      it.effect("delete asks first: Cancel keeps the webhook, Delete removes it", () =>
        Effect.gen(function* () {
          const base = yield* Server.baseUrl
          const created = yield* call("/webhooks", {
            key: keys.a,
            json: {
              url: "https://hooks.example.org/to-delete",
              events: ["tour-created"],
              auth: { type: "bearer", token: "t" }
            }
          })
          yield* Effect.promise(async () => {
            const { page: p, assertClean } = await page(base)
            await signIn(p, base, keys.a)
            const card = p.locator(".card", { hasText: "https://hooks.example.org/to-delete" })
            await card.getByRole("button", { name: "Delete" }).click()
            const dialog = p.getByRole("dialog", { name: "Delete this webhook?" })
            await dialog.waitFor()
            assert.isTrue(
              await dialog.getByRole("button", { name: "Cancel" }).evaluate((b) => b === document.activeElement)
            )
            await p.keyboard.press("Escape")
            await dialog.waitFor({ state: "hidden" })
            assert.strictEqual(await card.count(), 1)
            await card.getByRole("button", { name: "Delete" }).click()
            await dialog.getByRole("button", { name: "Delete webhook" }).click()
            await card.waitFor({ state: "detached" })
            assertClean()
          })
          assert.strictEqual((yield* call(`/webhooks/${created.body.id}`, { key: keys.a })).status, 404)
        })
      )

      it.effect("the whole create flow by keyboard alone", () =>
        Effect.gen(function* () {
          const base = yield* Server.baseUrl
          const url = "https://hooks.example.org/keyboard"
          yield* Effect.promise(async () => {
            const { page: p, assertClean } = await page(base)
            await p.goto(`${base}/console`)
            await tabTo(p, "#api-key")
            await p.keyboard.type(keys.a)
            await p.keyboard.press("Enter")
            await listLoaded(p)
            await tabTo(p, "a[href='#/new']")
            await p.keyboard.press("Enter")
            await p.getByRole("heading", { name: "New webhook" }).waitFor()
            await tabTo(p, "#control-url")
            await p.keyboard.press("ControlOrMeta+A")
            await p.keyboard.type(url)
            await tabTo(p, "#event-search")
            await p.keyboard.type("tour-created")
            await tabTo(p, "#event-tour-created")
            await p.keyboard.press("Space")
            await tabTo(p, "#control-auth_type")
            await p.keyboard.press("ArrowDown")
            await p.keyboard.press("ArrowDown")
            await tabTo(p, "#control-auth_token")
            await p.keyboard.type("keyboard-token")
            await tabTo(p, "button", "Add a filter for tour-created")
            await p.keyboard.press("Enter")
            await tabTo(p, "select[id$='conditions_0_field']")
            await p.keyboard.press("ArrowDown")
            await tabTo(p, "select[id$='conditions_0_operator']")
            await tabTo(p, "input[id$='conditions_0_value']")
            await p.keyboard.type("planned")
            await tabTo(p, "button[type='submit']")
            await p.keyboard.press("Enter")
            await p.getByRole("heading", { name: "Delivery log" }).waitFor()
            assertClean()
          })
          const listed = (yield* call("/webhooks?limit=100", { key: keys.a })).body.data as Array<{
            url: string
            auth: unknown
            events: Array<string>
            filters: Record<string, unknown>
          }>
          const made = listed.find((webhook) => webhook.url === url)!
          assert.deepStrictEqual(made.events, ["tour-created"])
          assert.deepStrictEqual(made.auth, { type: "bearer", token: "********" })
          assert.deepStrictEqual(made.filters, {
            "tour-created": { match: "all", conditions: [{ field: "tour.id", operator: "equals", value: "planned" }] }
          })
        })
      )

      it.effect(
        "every control is labelled; list, filter builder and delivery log work at 390 px without sideways scrolling",
        () =>
          Effect.gen(function* () {
            const base = yield* Server.baseUrl
            const target = yield* receiver()
            yield* Effect.promise(async () => {
              const { page: p, assertClean } = await page(base, 390)
              await signIn(p, base, keys.a)
              assert.deepStrictEqual(await unlabelledControls(p), [])
              assert.isFalse(await overflowsSideways(p), "list at 390 px")
              await p.screenshot({ path: join(screenshots, "list-390.png"), fullPage: true })
              await buildWebhook(p, target.url)
              assert.deepStrictEqual(await unlabelledControls(p), [])
              assert.isFalse(await overflowsSideways(p), "filter builder at 390 px")
              await p.screenshot({ path: join(screenshots, "filter-builder-390.png"), fullPage: true })
              await p.getByRole("button", { name: "Create webhook" }).click()
              await p.getByRole("heading", { name: "Delivery log" }).waitFor()
              assertClean()
            })
            yield* call("/events", { key: keys.a, json: tourAction("advance", "opt_north") })
            yield* eventually(
              Effect.sync(() => target.received.length === 1),
              "a delivery"
            )
            yield* Effect.promise(async () => {
              const { page: p, assertClean } = await page(base, 390)
              await signIn(p, base, keys.a)
              await p
                .locator(".card", { hasText: target.url })
                .getByRole("link", { name: "Deliveries and alerts" })
                .click()
              await p.locator(".delivery").first().waitFor()
              assert.isFalse(await overflowsSideways(p), "delivery log at 390 px")
              await p.screenshot({ path: join(screenshots, "delivery-log-390.png"), fullPage: true })
              await p.getByRole("button", { name: "Rotate secret" }).click()
              await p.getByRole("dialog", { name: "Rotate secret" }).waitFor()
              assert.isFalse(await overflowsSideways(p), "rotate dialog at 390 px")
              assert.deepStrictEqual(await unlabelledControls(p), [])
              await p.screenshot({ path: join(screenshots, "rotate-secret-390.png"), fullPage: true })
              await p.keyboard.press("Escape")
              await p.getByRole("dialog", { name: "Rotate secret" }).waitFor({ state: "detached" })
              await p.setViewportSize({ width: 1280, height: 900 })
              await p.getByRole("link", { name: "Webhooks" }).click()
              await p.locator(".webhook-list").waitFor()
              await p.screenshot({ path: join(screenshots, "list-1280.png"), fullPage: true })
              assertClean()
            })
          }).pipe(Effect.scoped)
      )
    }
  )

  layer(serverLayer(pglite, { allowPrivateTargets: false }, {}, log), {
    timeout: "120 seconds",
    excludeTestServices: true
  })("console without private targets [pglite]", (it) => {
    it.effect("an http:// URL gets the API's issue next to the URL field", () =>
      Effect.gen(function* () {
        const base = yield* Server.baseUrl
        yield* Effect.promise(async () => {
          const { page: p, assertClean } = await page(base)
          await signIn(p, base, keys.a)
          await p.getByRole("link", { name: "New webhook" }).click()
          await p.getByLabel("URL", { exact: true }).fill("http://hooks.example.org/plain")
          await p.getByLabel("Search event types").fill("tour-created")
          await p.getByLabel("tour-created", { exact: true }).check()
          await p.getByLabel("Shared secret").fill(secret)
          await p.getByRole("button", { name: "Create webhook" }).click()
          const error = p.locator("#control-url-error")
          await error.waitFor()
          assert.match((await error.textContent()) ?? "", /https/)
          assert.strictEqual(await p.getByLabel("URL", { exact: true }).getAttribute("aria-invalid"), "true")
          assert.isTrue(await p.locator(".issue-summary").evaluate((summary) => summary === document.activeElement))
          assertClean([/status of 400/])
        })
      })
    )
  })
})
