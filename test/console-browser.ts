/**
 * Driving the operator console in Debian's Chromium through playwright-core (no browser
 * download: the system binary). Every page a test opens is watched: a console error, an uncaught
 * exception, a failed request or a request to another origin fails the test.
 */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type Browser, chromium, type Page } from "playwright-core"

/** The browser binary: `CHROMIUM_PATH`, else Debian's `chromium` package. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

export const hasChromium = existsSync(chromiumPath)

const keptScreenshots = process.env.WAYBILL_SCREENSHOTS

/**
 * Where screenshots go: `WAYBILL_SCREENSHOTS` (docs/images: `npm run docs:screenshots`), else a
 * temporary directory, removed after each suite.
 */
export const screenshots = keptScreenshots ?? mkdtempSync(join(tmpdir(), "waybill-console-screenshots-"))

// The browser of the running `describeInBrowser` suite.
let browser: Browser | undefined

/**
 * A suite in the browser: Chromium launched before it and closed after, the screenshots
 * directory made; without Chromium, one skipped test that says so.
 */
export const describeInBrowser = (name: string, suite: () => void) => {
  describe.skipIf(hasChromium)(name, () => {
    it.skip("NOT RUN: chromium missing (apt-get install chromium, or set CHROMIUM_PATH; CI installs it)", () => {})
  })
  describe.runIf(hasChromium)(name, () => {
    beforeAll(async () => {
      browser = await chromium.launch({
        executablePath: chromiumPath,
        args: ["--no-sandbox", "--disable-dev-shm-usage"]
      })
      mkdirSync(screenshots, { recursive: true })
    })
    afterAll(async () => {
      await browser?.close()
      browser = undefined
      if (keptScreenshots === undefined) await rm(screenshots, { recursive: true, force: true })
    })
    suite()
  })
}

export interface Watched {
  readonly page: Page
  /** Fails if anything went wrong on the page, except console errors matching `allowed`. */
  readonly assertClean: (allowed?: ReadonlyArray<RegExp>) => void
}

/** A fresh page (own session storage) of the given width, watched for problems; in `describeInBrowser`. */
export const openPage = async (origin: string, width = 1280): Promise<Watched> => {
  if (browser === undefined) return assert.fail("openPage runs inside describeInBrowser")
  const context = await browser.newContext({ viewport: { width, height: 900 } })
  const page = await context.newPage()
  const problems: Array<string> = []
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`)
  })
  page.on("pageerror", (error) => problems.push(`uncaught: ${error.message}`))
  page.on("requestfailed", (request) => problems.push(`failed request: ${request.url()}`))
  page.on("request", (request) => {
    const url = request.url()
    if (!url.startsWith(origin) && !url.startsWith("data:")) problems.push(`request to another origin: ${url}`)
  })
  return {
    page,
    assertClean: (allowed = []) => {
      const left = problems.filter((problem) => !allowed.some((pattern) => pattern.test(problem)))
      assert.deepStrictEqual(left, [], "the page showed problems")
    }
  }
}

/** Signs in on the console page with a key. */
export const signIn = async (page: Page, base: string, key: string) => {
  await page.goto(`${base}/console`)
  await page.getByLabel("API key").fill(key)
  await page.getByRole("button", { name: "Sign in" }).click()
  await listLoaded(page)
}

/** Waits until the webhook list has loaded (its cards, or the empty state). */
export const listLoaded = (page: Page) => page.locator(".webhook-list, .empty").first().waitFor()

/**
 * Presses Tab until the focused element matches `selector` (and holds `text`, if given), keyboard
 * only, at most `limit` times.
 */
export const tabTo = async (page: Page, selector: string, text?: string, limit = 200) => {
  for (let presses = 0; presses < limit; presses++) {
    await page.keyboard.press("Tab")
    const reached = await page.evaluate(
      ([wanted, words]) => {
        const focused = document.activeElement
        return (focused?.matches(wanted) ?? false) && (words === "" || (focused?.textContent ?? "").includes(words))
      },
      [selector, text ?? ""] as const
    )
    if (reached) return
  }
  assert.fail(`Tab never reached ${selector}${text === undefined ? "" : ` "${text}"`}`)
}

/** Whether the page scrolls sideways (it should not, at any width it supports). */
export const overflowsSideways = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth)

/** Every form control that has no accessible label. */
export const unlabelledControls = (page: Page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll("input, select, textarea, button"))
      .filter((element) => {
        const control = element as HTMLInputElement
        const labelled = (control.labels?.length ?? 0) > 0 || control.getAttribute("aria-label") !== null
        const text = element.tagName === "BUTTON" && (element.textContent ?? "").trim() !== ""
        return !labelled && !text
      })
      .map((element) => element.outerHTML.slice(0, 120))
  )
