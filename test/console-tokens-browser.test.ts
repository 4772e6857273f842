/**
 * The console for a host's own users, in Chromium (one browser, few page loads): the example
 * host (`examples/embed/src/console-host.ts`) signs its user in, mints a console token in
 * process and frames the console in its settings page. With `manage` the framed console edits a
 * webhook; with `read` it shows no control that changes one; when the token expires it says so
 * and links back to the host's page; a revoked one ends it at the next call. The token
 * leaves the address bar at once and appears in no line the servers log. Screenshots of the
 * framed console at 1280 and 390 px go to `WAYBILL_SCREENSHOTS` (docs/images).
 */
import { join } from "node:path"
import { afterAll, assert, beforeAll, it } from "@effect/vitest"
import { start } from "../examples/embed/src/console-host.js"
import type { Running } from "../examples/embed/src/Main.js"
import { startOnMigratedDatabase } from "../examples/embed/test/started.js"
import { describeInBrowser, openPage, overflowsSideways, screenshots } from "./console-browser.js"

const key = "console-host-key-0001"
const secret = `whsec_${Buffer.alloc(32, 9).toString("base64")}`

// Every line the process writes while the host runs: what the servers log.
const written: Array<string> = []
const writes = { out: process.stdout.write, err: process.stderr.write }

let host: Running

const api = async (path: string, init: RequestInit = {}) => {
  const response = await fetch(`${host.url}/waybill${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }
  })
  return { status: response.status, body: response.status === 204 ? null : await response.json() }
}

describeInBrowser("console tokens in a host's settings page", () => {
  beforeAll(async () => {
    const capture =
      (stream: NodeJS.WriteStream, original: typeof process.stdout.write) =>
      (chunk: unknown, ...rest: Array<unknown>) => {
        written.push(String(chunk))
        return (original as (...args: Array<unknown>) => boolean).call(stream, chunk, ...rest)
      }
    process.stdout.write = capture(process.stdout, writes.out) as typeof process.stdout.write
    process.stderr.write = capture(process.stderr, writes.err) as typeof process.stderr.write
    host = await startOnMigratedDatabase(start, {
      WAYBILL_API_KEYS: `acme:${key}`,
      WAYBILL_ALLOW_PRIVATE_TARGETS: "false",
      WAYBILL_LOG_LEVEL: "Debug"
    })
    const created = await api("/webhooks", {
      method: "POST",
      body: JSON.stringify({
        url: "https://receiver.example/orders",
        events: ["tour-created"],
        auth: { type: "hmac", secret },
        description: "Orders"
      })
    })
    assert.strictEqual(created.status, 201)
  })
  afterAll(async () => {
    await host?.close()
    process.stdout.write = writes.out
    process.stderr.write = writes.err
  })

  it("the console page may be framed by the host's origin only; ?return= only to it", async () => {
    const framed = await fetch(`${host.url}/waybill/console?return=${encodeURIComponent(`${host.url}/settings`)}`)
    assert.include(framed.headers.get("content-security-policy") ?? "", `frame-ancestors ${host.url}`)
    assert.include(await framed.text(), `<meta name="waybill-return" content="${host.url}/settings">`)
    const elsewhere = await fetch(`${host.url}/waybill/console?return=${encodeURIComponent("https://evil.example/")}`)
    assert.notInclude(await elsewhere.text(), "waybill-return")
  })

  it("manage: signs in from the fragment, edits a webhook in the frame, and ends when revoked", async () => {
    const { page, assertClean } = await openPage(host.url, 1280)
    await page.goto(`${host.url}/login?user=ada`)
    const frame = page.frameLocator('iframe[title="Webhooks"]')
    await frame.getByText("Ada · manage access, until").waitFor()
    const inFrame = page.frames().find((candidate) => candidate !== page.mainFrame())!
    const state = await inFrame.evaluate(() => ({ href: location.href, stored: Object.values(sessionStorage) }))
    assert.notInclude(state.href, "wbc_")
    assert.notInclude(state.href, "#token")
    assert.match(state.stored[0] ?? "", /^wbc_/)
    await frame.locator(".webhook-list").waitFor()
    await page.screenshot({ path: join(screenshots, "console-framed-1280.png") })

    await frame.getByRole("link", { name: "Edit" }).click()
    await frame.getByLabel("Description").fill("Orders, edited in the host")
    await frame.getByRole("button", { name: /Save/ }).click()
    await frame.getByText("https://receiver.example/orders").first().waitFor()
    const listed = await api("/webhooks")
    assert.strictEqual(listed.body.data[0].description, "Orders, edited in the host")

    await page.setViewportSize({ width: 390, height: 844 })
    await frame.getByRole("link", { name: "Webhooks" }).click()
    await frame.locator(".webhook-list").waitFor()
    assert.isFalse(await overflowsSideways(page))
    assert.isFalse(
      await inFrame.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth)
    )
    await page.screenshot({ path: join(screenshots, "console-framed-390.png") })

    // Revoked: the next call is refused and the console says so, with the way back.
    const tokens = await api("/console/tokens")
    for (const token of tokens.body.data) await api(`/console/tokens/${token.id}`, { method: "DELETE" })
    await frame.getByRole("link", { name: "Deliveries and alerts" }).click()
    await frame.getByText("Your access has expired or was revoked.").waitFor()
    await frame.getByRole("link", { name: /^Back to 127\.0\.0\.1:/ }).waitFor()
    assertClean([/status of 401/])
  })

  it("read: shows no control that changes a webhook, by keyboard too; says when the token expires and links back", async () => {
    const { page, assertClean } = await openPage(host.url, 1280)
    await page.clock.install()
    await page.goto(`${host.url}/login?user=grace`)
    const frame = page.frameLocator('iframe[title="Webhooks"]')
    await frame.getByText("Grace · read-only access, until").waitFor()
    await frame.locator(".webhook-list").waitFor()
    for (const name of ["New webhook", "Edit", "Delete", "Disable"]) {
      assert.strictEqual(await frame.getByRole("link", { name, exact: true }).count(), 0, name)
      assert.strictEqual(await frame.getByRole("button", { name, exact: true }).count(), 0, name)
    }
    // By keyboard alone, from the host's page into the frame.
    const inFrame = page.frames().find((candidate) => candidate !== page.mainFrame())!
    let reached = false
    for (let presses = 0; presses < 30 && !reached; presses++) {
      await page.keyboard.press("Tab")
      reached = await inFrame.evaluate(() => document.activeElement?.textContent === "Deliveries and alerts")
    }
    assert.isTrue(reached, "Tab reaches the framed console's links")
    await page.keyboard.press("Enter")
    await frame.getByRole("heading", { name: "Delivery log" }).waitFor()
    for (const name of [/^Edit$/, /^Disable$/, /Rotate secret/, /Replay failed deliveries/, /^Resend/]) {
      assert.strictEqual(await frame.getByRole("button", { name }).count(), 0, String(name))
      assert.strictEqual(await frame.getByRole("link", { name }).count(), 0, String(name))
    }
    assert.strictEqual(await frame.getByRole("button", { name: "Refresh" }).count(), 1)

    // The token lives 15 minutes: past them the console says so and offers the host's page.
    await page.clock.fastForward("15:01")
    await frame.getByText(/^Your access expired at /).waitFor()
    // Back to the real time, which the host's next token is minted at.
    await page.clock.setSystemTime(new Date())
    await frame.getByRole("link", { name: /^Back to 127\.0\.0\.1:/ }).click()
    await page.waitForURL(`${host.url}/settings/webhooks`)
    await frame.getByText("Grace · read-only access, until").waitFor()
    assertClean()
  })

  it("no token appears in any line the servers wrote", () => {
    const output = written.join("")
    assert.notMatch(output, /wbc_[0-9a-z]{26}_/)
  })
})
