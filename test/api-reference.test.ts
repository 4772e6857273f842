/**
 * The interactive API reference at `/docs`, in Debian's Chromium: its sidebar names each group
 * once (the API's "Webhooks" routes apart from the events delivered to webhooks), and the API
 * key's scheme is selected from the start.
 */
import { assert, layer } from "@effect/vitest"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect } from "effect"
import { describeInBrowser, openPage, screenshots } from "./console-browser.js"
import { baseUrl, serverLayer, testLog } from "./harness.js"

const log = testLog("the server")
log.showOnFailure()

describeInBrowser("the API reference in a browser", () => {
  layer(serverLayer(Testing.backends()[0]!, {}, {}, log), { timeout: "120 seconds", excludeTestServices: true })(
    "GET /docs [pglite]",
    (it) => {
      it.effect("names each sidebar group once and opens with the API key's scheme selected", () =>
        Effect.gen(function* () {
          const base = yield* baseUrl
          const { page, assertClean } = yield* Effect.promise(() => openPage(base))
          yield* Effect.promise(async () => {
            await page.goto(`${base}/docs`)
            await page.getByText("Events delivered to webhooks").first().waitFor()
            await page.screenshot({ path: `${screenshots}/api-reference-1280.png` })
          })
          const sidebar = yield* Effect.promise(() => page.locator("nav, aside, .sidebar").first().innerText())
          const groups = ["System", "Reference data", "Drafts", "Products", "Tours", "Webhooks"]
          const lines = sidebar.split("\n").map((line) => line.trim())
          for (const group of groups) assert.include(lines, group, sidebar)
          const lower = lines.filter((line) => line !== "").map((line) => line.toLowerCase())
          for (const group of groups) {
            assert.strictEqual(lower.filter((line) => line === group.toLowerCase()).length, 1, `${group}: ${sidebar}`)
          }
          const body = yield* Effect.promise(() => page.locator("body").innerText())
          assert.notInclude(body, "No authentication selected")
          assert.match(body, /Selected Auth Type:\s*apiKey/)
          assertClean()
        })
      )
    }
  )
})
