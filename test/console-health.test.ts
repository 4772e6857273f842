/**
 * The console's view of a webhook's health and flow control, in a real browser (Debian's Chromium
 * through playwright-core) against a real reference server on the embedded database: the chart of
 * the last 24 hours on the webhook's page (succeeded and failed per hour as SVG bars, totals,
 * latency p50/p95, every hour as a table; the server's clock is moved back through the day so
 * that the deliveries fall in different hours); the status badge, Disable and Enable on the list
 * and the page with the held count and when the oldest held delivery expires, and the rate limit and ordering in the form with the API's
 * issues at their fields. By keyboard and at 390 px. Screenshots go to
 * `WAYBILL_SCREENSHOTS` (docs/images: `npm run docs:screenshots`), else to a temporary directory.
 */
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import * as AdjustableClock from "@waybill/server/AdjustableClock"
import * as Server from "@waybill/server/Server"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect } from "effect"
import {
  describeInBrowser,
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
const clock = AdjustableClock.make()
const HOUR = 3_600_000

const api = (path: string, options: Parameters<typeof call>[1] = {}) => call(path, { key: keys.a, ...options })

const publish = (id: string) =>
  api("/events", {
    json: { type: "tour-created", payload: { tour: { id, status: "planned", substatus: null, properties: {} } } }
  })

// Hours ago → how many deliveries succeed and fail in that hour.
const day: ReadonlyArray<readonly [number, number, number]> = [
  [22, 4, 0],
  [19, 6, 1],
  [15, 3, 0],
  [11, 7, 2],
  [7, 5, 0],
  [4, 6, 3],
  [2, 9, 1],
  [0, 4, 0]
]

describeInBrowser("console health view in a browser", () => {
  layer(serverLayer(pglite, {}, { clock }, log), { timeout: "120 seconds", excludeTestServices: true })(
    "console health [pglite]",
    (it) => {
      it.effect(
        "the webhook's page charts its last 24 hours: bars per hour, totals, latency, and every hour as a table by keyboard; at 390 px too",
        () =>
          Effect.gen(function* () {
            const base = yield* Server.baseUrl
            // Tours named "bad…" are refused on both attempts.
            const target = yield* receiver((request) => ({ status: request.body.includes('"bad') ? 500 : 200 }))
            const webhook = (yield* api("/webhooks", {
              json: {
                url: target.url,
                events: ["tour-created"],
                auth: { type: "bearer", token: "health-token" },
                description: "dispatch board"
              }
            })).body
            const now = Date.now()
            let ended = 0
            for (const [hoursAgo, succeeded, failed] of day) {
              yield* clock.setTime(now - hoursAgo * HOUR - 10 * 60_000)
              for (let i = 0; i < succeeded; i++) yield* publish(`tour_ok_${hoursAgo}_${i}`)
              for (let i = 0; i < failed; i++) yield* publish(`bad_${hoursAgo}_${i}`)
              ended += succeeded + failed
              const expected = ended
              yield* eventually(
                Effect.map(
                  api(`/webhooks/${webhook.id}/stats?hours=48`),
                  (reply) => reply.body.succeeded + reply.body.failed === expected
                ),
                `the deliveries of ${hoursAgo} hours ago`
              )
            }
            yield* clock.setTime(Date.now())
            const totals = day.reduce((sum, [, ok, bad]) => [sum[0]! + ok, sum[1]! + bad], [0, 0])

            yield* Effect.promise(async () => {
              const { page: p, assertClean } = await openPage(new URL(base).origin, 1280)
              await signIn(p, base, keys.a)
              await p
                .locator(".card", { hasText: target.url })
                .getByRole("link", { name: "Deliveries and alerts" })
                .click()
              const chart = p.getByRole("img", { name: /deliveries succeeded/ })
              await chart.waitFor()
              const label = (await chart.getAttribute("aria-label")) ?? ""
              assert.include(label, `${totals[0]} deliveries succeeded and ${totals[1]} failed in the last 24 hours`)
              assert.match(label, /the busiest hour, from \d\d:\d\d UTC, had 9 succeeded and 1 failed/)
              const figures = await p.locator(".chart-totals").innerText()
              assert.match(figures, new RegExp(`Succeeded\\s+${totals[0]}`))
              assert.match(figures, new RegExp(`Failed\\s+${totals[1]}`))
              assert.match(figures, /Pending\s+0/)
              assert.match(figures, /Latency p50\s+\d+(\.\d)? m?s/)
              assert.match(figures, /Latency p95\s+\d+(\.\d)? m?s/)
              // One bar pair per hour; the hours with deliveries have their heights.
              assert.strictEqual(await p.locator(".chart svg g").count(), 24)
              const heights = await p
                .locator(".chart svg .bar-failed")
                .evaluateAll((bars) => bars.map((bar) => Number(bar.getAttribute("height"))))
              assert.strictEqual(heights.filter((height) => height > 0).length, 4)
              assert.deepStrictEqual(await unlabelledControls(p), [])

              // The table, opened by keyboard: every hour, oldest first.
              await tabTo(p, "summary", "Every hour as a table")
              await p.keyboard.press("Enter")
              const rows = p.locator(".chart-table tbody tr")
              await rows.first().waitFor()
              assert.strictEqual(await rows.count(), 24)
              const cells = await rows.evaluateAll((trs) =>
                trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => Number(td.textContent)))
              )
              assert.deepStrictEqual(
                cells.reduce((sum, [ok, bad]) => [sum[0]! + ok!, sum[1]! + bad!], [0, 0]),
                totals
              )
              assert.deepStrictEqual(
                cells.filter(([ok, bad]) => ok! + bad! > 0),
                day.map(([, ok, bad]) => [ok, bad])
              )
              await p.keyboard.press("Enter")
              await p.evaluate(() => (document.activeElement as HTMLElement | null)?.blur())
              await p.locator(".chart").screenshot({ path: join(screenshots, "delivery-chart-1280.png") })
              await p.screenshot({ path: join(screenshots, "webhook-health-1280.png"), fullPage: false })

              await p.setViewportSize({ width: 390, height: 900 })
              assert.isFalse(await overflowsSideways(p), "the chart at 390 px")
              const box = await p.locator(".chart svg").boundingBox()
              assert.isAtMost((box?.x ?? 0) + (box?.width ?? 1000), 390)
              await p.locator(".chart").scrollIntoViewIfNeeded()
              await p.locator(".chart").screenshot({ path: join(screenshots, "delivery-chart-390.png") })
              assertClean()
            })
          }).pipe(Effect.scoped)
      )

      it.effect(
        "rate limit and ordering in the form (the API's issue at its field); Disable, held deliveries and Enable from the list and the page, by keyboard; at 390 px",
        () =>
          Effect.gen(function* () {
            const base = yield* Server.baseUrl
            const target = yield* receiver()
            const { page: p, assertClean } = yield* Effect.promise(() => openPage(new URL(base).origin, 390))
            const card = () => p.locator(".card", { hasText: target.url })
            yield* Effect.promise(async () => {
              await signIn(p, base, keys.a)
              await p.getByRole("link", { name: "New webhook" }).click()
              await p.getByLabel("URL", { exact: true }).fill(target.url)
              await p.getByLabel("Search event types").fill("tour-created")
              await p.getByLabel("tour-created", { exact: true }).check()
              // By keyboard: the rate limit, then the ordering.
              await tabTo(p, "#control-rateLimitPerSecond")
              await p.keyboard.type("lots")
              await p.keyboard.press("Tab")
              await p.keyboard.press("ArrowDown")
              assert.strictEqual(await p.getByLabel("Ordering").inputValue(), "fifo")
              await p.getByLabel("Method").selectOption("bearer")
              await p.getByLabel("Token").fill("flow-token")
              assert.deepStrictEqual(await unlabelledControls(p), [])
              await p.getByRole("button", { name: "Create webhook" }).click()
              const error = p.locator("#control-rateLimitPerSecond-error")
              await error.waitFor()
              assert.match((await error.textContent()) ?? "", /10000/)
              assert.strictEqual(
                await p.getByLabel("Rate limit (deliveries per second, optional)").getAttribute("aria-invalid"),
                "true"
              )
              assert.isFalse(await overflowsSideways(p), "the form at 390 px")
              await p.locator("section", { hasText: "Rate limit" }).first().scrollIntoViewIfNeeded()
              await p.screenshot({ path: join(screenshots, "form-delivery-390.png") })
              await p.getByLabel("Rate limit (deliveries per second, optional)").fill("50")
              await p.getByRole("button", { name: "Create webhook" }).click()
              await p.getByRole("heading", { name: "Delivery log" }).waitFor()
            })
            const id = decodeURIComponent(/#\/webhooks\/([^/]+)$/.exec(p.url())![1]!)
            const created = (yield* api(`/webhooks/${id}`)).body
            assert.deepStrictEqual(
              [created.rateLimitPerSecond, created.ordering, created.status],
              [50, "fifo", "enabled"]
            )

            // The list: the badge, Disable by keyboard.
            yield* Effect.promise(async () => {
              await p.getByRole("link", { name: "Webhooks" }).click()
              await card().waitFor()
              assert.strictEqual(await card().locator(".webhook-status").textContent(), "Enabled")
              assert.include(
                (await card().textContent()) ?? "",
                "at most 50 per second, one at a time in event order (FIFO)"
              )
              await tabTo(p, ".card button.disable")
              while (
                !((await p.evaluate(() => document.activeElement?.closest(".card")?.textContent)) ?? "").includes(
                  target.url
                )
              ) {
                await tabTo(p, ".card button.disable")
              }
              await p.keyboard.press("Enter")
              await p.getByText(`${target.url} is disabled: its deliveries are held until it is enabled.`).waitFor()
              assert.strictEqual(await card().locator(".webhook-status").textContent(), "Disabled (manual)")
            })
            assert.strictEqual((yield* api(`/webhooks/${id}`)).body.status, "disabled")
            const first = (yield* publish("tour_flow_1")).body.id as string
            const second = (yield* publish("tour_flow_2")).body.id as string
            yield* eventually(
              Effect.map(api(`/webhooks/${id}/stats`), (reply) => reply.body.held === 2),
              "two held deliveries"
            )
            assert.strictEqual(target.received.length, 0)
            // When the oldest held delivery expires, as the list (to the minute) and the page say it.
            const answered = (yield* api(`/webhooks/${id}`)).body
            assert.strictEqual(answered.heldDeliveries, 2)
            const expiresAt = answered.oldestHeldExpiresAt as number
            const utc = new Date(expiresAt * 1000).toISOString().replace("T", " ")
            const expiry = (at: string) =>
              `Held deliveries expire from ${at} UTC (retention); enable the webhook before then to send them.`

            // The page: status, held count and expiry, held deliveries without Resend; Enable by keyboard.
            yield* Effect.promise(async () => {
              // The count comes with the list's answer: no statistics request for it.
              const statistics: Array<string> = []
              const noteStatistics = (request: { url(): string }) => {
                if (request.url().includes("/stats")) statistics.push(request.url())
              }
              p.on("request", noteStatistics)
              await p.reload()
              await card().locator(".held").waitFor()
              p.off("request", noteStatistics)
              assert.deepStrictEqual(statistics, [], "the list asks no statistics")
              assert.strictEqual(await card().locator(".held").textContent(), "2 deliveries held")
              assert.strictEqual(await card().locator(".held-expiry").textContent(), expiry(utc.slice(0, 16)))
              assert.isFalse(await overflowsSideways(p), "the list at 390 px")
              await card().scrollIntoViewIfNeeded()
              await card().screenshot({ path: join(screenshots, "list-disabled-390.png") })
              await p.setViewportSize({ width: 1280, height: 900 })
              await p.screenshot({ path: join(screenshots, "list-status-1280.png"), fullPage: true })
              await p.setViewportSize({ width: 390, height: 900 })
              await card().getByRole("link", { name: "Deliveries and alerts" }).click()
              await p.locator(".delivery").nth(1).waitFor()
              const settings = (await p.locator("dl.settings").textContent()) ?? ""
              assert.include(settings, "Disabled (manual)")
              assert.include(settings, "By an operator since")
              assert.include(settings, "2 deliveries held")
              assert.include(settings, expiry(utc.slice(0, 19)))
              assert.deepStrictEqual(await p.locator(".delivery .status").allTextContents(), ["held", "held"])
              assert.strictEqual(await p.locator(".delivery .resend").count(), 0)
              assert.match(await p.locator(".chart-totals").innerText(), /Held\s+2/)
              assert.isFalse(await overflowsSideways(p), "the page at 390 px")
              assert.deepStrictEqual(await unlabelledControls(p), [])
              await p.screenshot({ path: join(screenshots, "webhook-disabled-390.png") })
              await tabTo(p, "button.enable")
              await p.keyboard.press("Enter")
              await p
                .getByText(`${target.url} is enabled: its held deliveries are being sent in event order.`)
                .waitFor()
              assert.strictEqual(await p.locator("dl.settings .webhook-status").textContent(), "Enabled")
              assert.strictEqual(await p.locator(".held-expiry").count(), 0)
            })
            yield* eventually(
              Effect.sync(() => target.received.length === 2),
              "the held deliveries, once enabled"
            )
            assert.deepStrictEqual(
              target.received.map((request) => request.headers["x-event-id"]),
              [first, second]
            )
            assert.strictEqual((yield* api(`/webhooks/${id}`)).body.status, "enabled")
            assertClean([/status of 400/])
          }).pipe(Effect.scoped)
      )
    }
  )
})
