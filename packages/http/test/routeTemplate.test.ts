import { assert, describe, it } from "@effect/vitest"
import * as Http from "../src/Http.js"

describe("Http.routeTemplate", () => {
  it("labels a path with the template of its endpoint, never the raw path", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["/drafts", "/drafts"],
      ["/drafts?limit=5", "/drafts"],
      ["/drafts/drf_01m8djhwkdbvbqrrbpqys712ha", "/drafts/{id}"],
      ["/drafts/anything-at-all/actions", "/drafts/{id}/actions"],
      ["/events", "/events"],
      ["/events?x=1", "/events"],
      ["/webhooks/filter-fields", "/webhooks/filter-fields"],
      ["/webhooks/whk_01m8djhwkdbvbqrrbpqys712ha", "/webhooks/{id}"],
      ["/health", "/health"],
      ["/health/ready", "/health/ready"],
      ["/metrics", "/metrics"],
      ["/console/assets/app.js", "/console/assets/app.js"],
      ["/drafts//actions", "unmatched"],
      ["/secret-token-in-a-path", "unmatched"],
      ["/drafts/a/b/c/d/e", "unmatched"]
    ]
    for (const [path, template] of cases) assert.strictEqual(Http.routeTemplate(path), template, path)
  })
})
