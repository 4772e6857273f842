/**
 * A small, dependency-free harness shared by the benchmarks: warm up, then run a function in
 * batches for a fixed time and report operations per second. Compare only figures taken in the
 * same run: the machine is shared and its speed varies between runs.
 */

/** One measured contender. */
export interface Measurement {
  readonly name: string
  readonly opsPerSecond: number
}

/**
 * Measures `fn` (one operation per call) for about `seconds` after a warm-up. `fn` returns a
 * value that is folded into a sink so the JIT cannot drop the work.
 */
export const measure = (name: string, fn: () => unknown, seconds = 2): Measurement => {
  let sink = 0
  const consume = (value: unknown) => {
    if (value === true || (typeof value === "string" && value.length > 0) || typeof value === "number") sink++
  }
  const warmUpUntil = performance.now() + Math.min(1000, seconds * 500)
  while (performance.now() < warmUpUntil) {
    for (let i = 0; i < 100; i++) consume(fn())
  }
  let operations = 0
  let batch = 100
  const start = performance.now()
  let elapsed = 0
  while (elapsed < seconds * 1000) {
    for (let i = 0; i < batch; i++) consume(fn())
    operations += batch
    elapsed = performance.now() - start
    if (elapsed < 50) batch *= 2
  }
  if (sink < 0) console.log(sink)
  return { name, opsPerSecond: (operations / elapsed) * 1000 }
}

/** Measures an asynchronous operation, awaited one at a time. */
export const measureAsync = async (name: string, fn: () => Promise<unknown>, seconds = 2): Promise<Measurement> => {
  const warmUpUntil = performance.now() + Math.min(1000, seconds * 500)
  while (performance.now() < warmUpUntil) await fn()
  let operations = 0
  const start = performance.now()
  while (performance.now() - start < seconds * 1000) {
    await fn()
    operations++
  }
  return { name, opsPerSecond: (operations / (performance.now() - start)) * 1000 }
}

const formatRate = (value: number) =>
  value >= 1e6 ? `${(value / 1e6).toFixed(2)}M` : value >= 1e3 ? `${(value / 1e3).toFixed(1)}k` : value.toFixed(1)

/** Prints a table of measurements with each one's ratio to `baseline` (a row's name). */
export const report = (title: string, rows: ReadonlyArray<Measurement>, baseline: string, unit = "ops/s"): void => {
  const base = rows.find((row) => row.name === baseline)?.opsPerSecond ?? Number.NaN
  console.log(`\n${title}`)
  const width = Math.max(...rows.map((row) => row.name.length), 10)
  for (const row of rows) {
    console.log(
      `  ${row.name.padEnd(width)}  ${formatRate(row.opsPerSecond).padStart(9)} ${unit}   ${(
        row.opsPerSecond / base
      ).toFixed(2)} × ${baseline}`
    )
  }
}

/** The median of `values` (the mean of the two middle ones for an even count). */
export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** The `q` quantile (0–1) of sorted values, nearest rank; NaN when there are none. */
export const quantile = (sorted: Float64Array, q: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!

/** The `q` quantile (0–1) of values in any order, nearest rank; NaN when there are none. */
export const quantileOf = (values: ReadonlyArray<number>, q: number): number =>
  quantile(Float64Array.from(values).sort(), q)

/** Checks a target and prints PASS or FAIL; returns whether it held. */
export const target = (label: string, actual: number, atLeast: number): boolean => {
  const ok = actual >= atLeast
  // A third digit where two would round across the bound (0.895 is not "0.90 … FAIL").
  const shown = Number(actual.toFixed(2)) >= atLeast === ok ? actual.toFixed(2) : actual.toFixed(3)
  console.log(`  target ${label}: ${shown} (needs ≥ ${atLeast}) ${ok ? "PASS" : "FAIL"}`)
  return ok
}

/**
 * Prints a figure with no bound of its own (`note` says how to read it, e.g. "lower is
 * better"); `npm run bench:compare` compares it between revisions as it does targets.
 */
export const figure = (label: string, value: number, note: string): void => {
  console.log(`  figure ${label}: ${value.toFixed(2)} (${note})`)
}
