import { assert, describe, it } from "@effect/vitest"
import type { FilterField } from "@waybill/filters/FilterField"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Console from "../src/Console.js"
import {
  append,
  conditionCount,
  controlId,
  emptyCondition,
  emptyGroup,
  fromFilter,
  type GroupNode,
  replace,
  takesValue,
  toFilter,
  withField
} from "../src/ui/filterModel.js"

const fields: ReadonlyArray<FilterField> = [
  { path: "tour.status", type: "text", selectable: true, operators: ["equals", "not_equals", "is_set"] },
  { path: "tour.properties.prop_weight", type: "number", selectable: true, operators: ["gt", "lt"] },
  { path: "tour.properties.prop_hazmat", type: "checkbox", selectable: true, operators: ["is_checked"] },
  {
    path: "tour.properties.prop_region",
    type: "select",
    selectable: true,
    operators: ["is", "is_not"],
    options: [
      { id: "opt_north", label: "North" },
      { id: "opt_south", label: "South" }
    ]
  }
]

describe("filter model", () => {
  const stored = {
    match: "all",
    conditions: [
      { field: "tour.status", operator: "not_equals", value: "cancelled" },
      { field: "tour.status", operator: "is_set" },
      {
        match: "any",
        conditions: [
          { field: "tour.properties.prop_weight", operator: "gt", value: 1000 },
          { field: "tour.properties.prop_hazmat", operator: "is_checked" },
          { field: "tour.properties.prop_region", operator: "is", value: "opt_north" }
        ]
      }
    ]
  }

  it("a stored filter survives the round trip through the editor's tree", () => {
    const tree = fromFilter(stored)
    assert.strictEqual(conditionCount(tree), 5)
    assert.deepStrictEqual(toFilter(tree, fields), stored)
  })

  it("numbers are sent as numbers; a number that does not parse is sent as typed, for the API to name", () => {
    const tree = fromFilter({
      conditions: [
        { field: "tour.properties.prop_weight", operator: "gt", value: "2.5" },
        { field: "tour.properties.prop_weight", operator: "lt", value: "12abc" },
        { field: "tour.properties.prop_weight", operator: "lt", value: "" }
      ]
    })
    assert.deepStrictEqual(toFilter(tree, fields), {
      match: "all",
      conditions: [
        { field: "tour.properties.prop_weight", operator: "gt", value: 2.5 },
        { field: "tour.properties.prop_weight", operator: "lt", value: "12abc" },
        { field: "tour.properties.prop_weight", operator: "lt", value: "" }
      ]
    })
  })

  it("checkbox fields and presence operators take no value", () => {
    assert.isFalse(takesValue("checkbox", "is_checked"))
    assert.isFalse(takesValue("text", "is_set"))
    assert.isFalse(takesValue("date", "is_not_set"))
    assert.isTrue(takesValue("text", "equals"))
    assert.isTrue(takesValue("select", "is"))
  })

  it("choosing a field takes its first operator, and a select's first option", () => {
    const condition = emptyCondition()
    assert.deepStrictEqual(withField(condition, fields[3]), {
      ...condition,
      field: "tour.properties.prop_region",
      operator: "is",
      value: "opt_north"
    })
    assert.deepStrictEqual(withField(condition, fields[1]), {
      ...condition,
      field: "tour.properties.prop_weight",
      operator: "gt",
      value: ""
    })
  })

  it("adds and removes nodes anywhere in the tree", () => {
    const root = emptyGroup()
    const inner = emptyGroup()
    const grown = append(append(root, root.key, inner), inner.key, emptyCondition()) as GroupNode
    assert.strictEqual(conditionCount(grown), 3)
    const pruned = replace(grown, inner.key, null) as GroupNode
    assert.strictEqual(conditionCount(pruned), 1)
    assert.strictEqual(pruned.children.length, 1)
  })

  it("control ids are valid element ids for any body path", () => {
    assert.strictEqual(
      controlId("filters.tour-created.conditions.0.value"),
      "control-filters_tour-created_conditions_0_value"
    )
    assert.match(controlId("auth.secret"), /^[A-Za-z][\w-]*$/)
  })
})

describe("Console.answer", () => {
  it.effect("serves the page at the path, with or without a trailing slash, and relative asset URLs", () =>
    Effect.gen(function* () {
      const bare = Option.getOrThrow(yield* Console.answer("/console"))
      assert.strictEqual(bare.status, 200)
      assert.include(bare.body, 'src="console/assets/app.js"')
      assert.include(bare.headers["content-security-policy"], "default-src 'none'")
      assert.include(bare.headers["content-security-policy"], "script-src 'self'")
      const slash = Option.getOrThrow(yield* Console.answer("/console/"))
      assert.include(slash.body, 'src="assets/app.js"')
      const elsewhere = Option.getOrThrow(yield* Console.answer("/ops/settings/", { path: "/ops/settings" }))
      assert.include(elsewhere.body, 'href="assets/app.css"')
      assert.isTrue(Option.isNone(yield* Console.answer("/console/other")))
      assert.isTrue(Option.isNone(yield* Console.answer("/webhooks")))
    })
  )

  it.effect("bundles the page script for the browser: no Node built-in left, nothing from another origin", () =>
    Effect.gen(function* () {
      const script = Option.getOrThrow(yield* Console.answer("/console/assets/app.js"))
      assert.strictEqual(script.headers["content-type"], "text/javascript; charset=utf-8")
      assert.isAbove(script.body.length, 10_000)
      assert.notMatch(script.body, /from\s*"node:|require\("node:/)
      assert.notMatch(script.body, /https?:\/\/(?!127\.0\.0\.1|localhost)[a-z0-9.-]+\.[a-z]{2,}\/[\w./-]*\.(js|css)/i)
      const style = Option.getOrThrow(yield* Console.answer("/console/assets/app.css"))
      assert.strictEqual(style.headers["content-type"], "text/css; charset=utf-8")
      assert.include(style.body, ".filter-group")
    })
  )

  it("as a Fetch handler: the console's page and assets, everything else to the API behind it", async () => {
    const api = async (request: Request) => new Response(`api ${request.method} ${new URL(request.url).pathname}`)
    const handler = Console.toWebHandler({ next: api })
    const page = await handler(new Request("http://waybill.test/console"))
    assert.strictEqual(page.status, 200)
    assert.include(await page.text(), "Waybill console")
    assert.strictEqual(await (await handler(new Request("http://waybill.test/drafts"))).text(), "api GET /drafts")
    const edit = await handler(new Request("http://waybill.test/console/api/webhooks/whk_1", { method: "PUT" }))
    assert.strictEqual(await edit.text(), "api PUT /console/api/webhooks/whk_1")
    assert.strictEqual((await Console.toWebHandler()(new Request("http://waybill.test/drafts"))).status, 404)
    const head = await handler(new Request("http://waybill.test/console", { method: "HEAD" }))
    assert.strictEqual(await head.text(), "")
  })
})
