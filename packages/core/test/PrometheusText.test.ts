import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as Metrics from "../src/Metrics.js"
import * as PrometheusText from "../src/PrometheusText.js"

describe("PrometheusText", () => {
  it.effect("writes counters, gauges and histograms with HELP and TYPE, labels escaped", () =>
    Effect.gen(function* () {
      const counter = Metric.counter("test_text_total", { description: "A counter.\nSecond line" })
      const gauge = Metric.gauge("test_text_gauge", { description: "A gauge." })
      const histogram = Metric.histogram("test_text_seconds", MetricBoundaries.fromIterable([0.1, 1]), "A histogram.")
      yield* Metric.incrementBy(Metric.tagged(counter, "label", 'a "quoted" \\ value\n'), 3)
      yield* Metric.set(gauge, 2.5)
      yield* Metric.update(histogram, 0.05)
      yield* Metric.update(histogram, 0.5)
      yield* Metric.update(histogram, 5)
      const text = PrometheusText.format(
        (yield* Metric.snapshot).filter((pair) => pair.metricKey.name.startsWith("test_text_"))
      )
      assert.strictEqual(
        text,
        [
          "# HELP test_text_gauge A gauge.",
          "# TYPE test_text_gauge gauge",
          "test_text_gauge 2.5",
          "# HELP test_text_seconds A histogram.",
          "# TYPE test_text_seconds histogram",
          'test_text_seconds_bucket{le="0.1"} 1',
          'test_text_seconds_bucket{le="1"} 2',
          'test_text_seconds_bucket{le="+Inf"} 3',
          "test_text_seconds_sum 5.55",
          "test_text_seconds_count 3",
          "# HELP test_text_total A counter.\\nSecond line",
          "# TYPE test_text_total counter",
          'test_text_total{label="a \\"quoted\\" \\\\ value\\n"} 3',
          ""
        ].join("\n")
      )
    })
  )

  it.effect("describes Waybill's families before their first series; keeps label sets bounded", () =>
    Effect.gen(function* () {
      const described = PrometheusText.format([], Metrics.families)
      for (const family of Metrics.families) {
        assert.include(described, `# HELP ${family.name} `)
        assert.include(described, `# TYPE ${family.name} ${family.type}\n`)
      }
      for (let n = 0; n < 300; n++) Metrics.recordPublished(`test-type-${n}`)
      const text = yield* PrometheusText.text
      const series = text.split("\n").filter((line) => line.startsWith("waybill_events_published_total{"))
      assert.isAtMost(series.length, 257)
      assert.include(text, 'waybill_events_published_total{type="other"}')
    })
  )
})
