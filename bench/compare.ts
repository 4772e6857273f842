/**
 * The same benchmark on two revisions, in turns, with an interval for the ratio: what an issue's
 * bound "within N % of the code before, same run" needs on a shared machine, where two runs of
 * one code differ by more than the bound.
 *
 * Usage: `npm run bench:compare -- --base <rev> [--head <rev>] [--pairs N] <benchmark>`, e.g.
 * `npm run bench:compare -- --base bb58c89 --pairs 8 dispatcher` (`--head`: another revision
 * in place of this checkout, prepared as the base is, e.g. to find which commit cost what).
 *
 * The base revision is checked out in a worktree of its own (kept for the next call, under the
 * system's temporary folder) with its dependencies (linked from this checkout's when the lock
 * files agree, else `npm ci`), and this checkout's `bench/` copied over it, so both sides run
 * the same benchmark code against their own packages (a benchmark that needs an API the base
 * lacks fails there, and says so). Then `--pairs` times: the base and this checkout one after
 * the other, the order flipped every pair (ABBA), each a fresh process as `npm run bench` runs
 * it. Reported per `target` or `figure` line the benchmark prints (or, for one that prints a
 * table of routes, per route: its requests per second over the first row's, the floor or ceiling
 * of the same run): each side's runs and median, the ratio of the medians (this checkout / base)
 * with a 90 % bootstrap interval that takes the runs as independent, and the mean of each pair's
 * ratio with its interval (pairs resampled: the two runs of a pair ran one after the other, so
 * the machine's drift over the whole run cancels within a pair). A bound holds when the interval
 * lies on its side; an interval across it says the machine cannot tell.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { cpSync, existsSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { median } from "./harness.js"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

const usage = "Usage: npm run bench:compare -- --base <rev> [--head <rev>] [--pairs N] <benchmark>"
const parseArgs = (args: ReadonlyArray<string>) => {
  let base: string | undefined
  let head: string | undefined
  let pairs = 6
  const names: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--base") base = args[++i]
    else if (arg === "--head") head = args[++i]
    else if (arg === "--pairs") pairs = Number(args[++i])
    else names.push(arg)
  }
  if (base === undefined || names.length !== 1 || !Number.isInteger(pairs) || pairs < 2 || pairs > 50) {
    console.error(`${usage}\n  --base is required; one benchmark name; --pairs a whole number from 2 to 50`)
    process.exit(2)
  }
  return { base, head, pairs, name: names[0]! }
}

const git = (...args: ReadonlyArray<string>) => execFileSync("git", ["-C", root, ...args], { encoding: "utf8" }).trim()

// A revision's worktree, its dependencies installed and this checkout's benchmarks in it.
const prepare = (revision: string): string => {
  const sha = git("rev-parse", "--verify", `${revision}^{commit}`)
  const tree = join(tmpdir(), `waybill-compare-${sha.slice(0, 12)}`)
  if (!existsSync(tree)) {
    git("worktree", "add", "--detach", tree, sha)
  }
  if (!existsSync(join(tree, "node_modules"))) {
    const sameLock =
      readFileSync(join(root, "package-lock.json"), "utf8") === readFileSync(join(tree, "package-lock.json"), "utf8")
    if (sameLock) {
      // Hard links, and the workspace links stay relative: they point into the worktree's packages.
      execFileSync("cp", ["-al", join(root, "node_modules"), join(tree, "node_modules")])
    } else {
      console.log(`  installing the dependencies of ${sha.slice(0, 12)} (its lock file differs) …`)
      execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: tree, stdio: "ignore" })
    }
  }
  rmSync(join(tree, "bench"), { recursive: true, force: true })
  cpSync(join(root, "bench"), join(tree, "bench"), { recursive: true })
  return tree
}

// One run of the benchmark in `tree`: its `target` and `figure` lines, label → value.
const runOnce = (tree: string, file: string): Map<string, number> => {
  const result = spawnSync(process.execPath, ["--conditions=@waybill/source", "--import", "tsx", join("bench", file)], {
    cwd: tree,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024
  })
  const targets = new Map<string, number>()
  for (const match of result.stdout.matchAll(/^ {2}(?:target|figure) (.+): (-?[0-9.]+) \(/gm)) {
    targets.set(match[1]!, Number(match[2]))
  }
  if (targets.size === 0) {
    // A table of routes (`reportLoad`, the http and drafts benchmarks): each row's throughput as a
    // share of the first row's, the floor or ceiling measured in the same run.
    const rows = [...result.stdout.matchAll(/^ {2}(\S.*?) +([0-9]+) req\/s /gm)]
    const reference = rows[0]
    for (const row of rows.slice(1)) {
      targets.set(`${row[1]} / ${reference![1]}`, Number(row[2]) / Number(reference![2]))
    }
  }
  if (targets.size === 0) {
    throw new Error(
      `${file} in ${tree} printed no target or figure (exit ${result.status}):\n${result.stdout}\n${result.stderr}`
    )
  }
  return targets
}

const resample = (values: ReadonlyArray<number>) =>
  Array.from({ length: values.length }, () => values[Math.floor(Math.random() * values.length)]!)
const mean = (values: ReadonlyArray<number>) => values.reduce((sum, value) => sum + value, 0) / values.length
// The 5th and 95th percentiles of 4,000 bootstrap draws.
const percentiles = (draw: () => number): readonly [number, number] => {
  const draws = Array.from({ length: 4000 }, draw).sort((a, b) => a - b)
  return [draws[Math.floor(draws.length * 0.05)]!, draws[Math.floor(draws.length * 0.95)]!]
}
// A 90 % interval of median(head) / median(base), each side resampled: runs taken as independent.
const interval = (base: ReadonlyArray<number>, head: ReadonlyArray<number>) =>
  percentiles(() => median(resample(head)) / median(resample(base)))
// A 90 % interval of the mean of each pair's ratio, pairs resampled: the two runs of a pair ran
// one after the other, so what drifts with the machine over the whole run cancels within a pair.
const pairedInterval = (ratios: ReadonlyArray<number>) => percentiles(() => mean(resample(ratios)))

const { base, head, pairs, name } = parseArgs(process.argv.slice(2))
const file = `${name}.bench.ts`
if (!existsSync(join(root, "bench", file))) {
  console.error(`No benchmark bench/${file}\n${usage}`)
  process.exit(2)
}
const short = (revision: string) => git("rev-parse", "--short", `${revision}^{commit}`)
const sides = [
  { name: `base ${short(base)}`, tree: prepare(base), runs: [] as Array<Map<string, number>> },
  head === undefined
    ? { name: `this checkout ${short("HEAD")}`, tree: root, runs: [] as Array<Map<string, number>> }
    : { name: `head ${short(head)}`, tree: prepare(head), runs: [] as Array<Map<string, number>> }
]
console.log(`Comparing ${sides[1]!.name} with ${sides[0]!.name} on ${file}: ${pairs} pairs, in turns (ABBA)`)
for (let pair = 0; pair < pairs; pair++) {
  const order = pair % 2 === 0 ? sides : [...sides].reverse()
  for (const side of order) {
    side.runs.push(runOnce(side.tree, file))
    process.stdout.write(".")
  }
}
process.stdout.write("\n")
const [before, after] = sides as [(typeof sides)[0], (typeof sides)[0]]
for (const label of after.runs[0]!.keys()) {
  const baseValues = before.runs.map((run) => run.get(label)).filter((value) => value !== undefined)
  const headValues = after.runs.map((run) => run.get(label)!)
  if (baseValues.length < 2) {
    console.log(`  ${label}: the base does not print it`)
    continue
  }
  const [low, high] = interval(baseValues, headValues)
  console.log(`  ${label}`)
  console.log(
    `    ${before.name}: ${baseValues.map((v) => v.toFixed(2)).join(", ")} (median ${median(baseValues).toFixed(3)})`
  )
  console.log(
    `    ${after.name}: ${headValues.map((v) => v.toFixed(2)).join(", ")} (median ${median(headValues).toFixed(3)})`
  )
  console.log(
    `    ${head === undefined ? "this checkout" : "head"} / base: ${(median(headValues) / median(baseValues)).toFixed(3)} (90 % interval ${low.toFixed(3)}–${high.toFixed(3)})`
  )
  if (baseValues.length === headValues.length) {
    const ratios = headValues.map((value, pair) => value / baseValues[pair]!)
    const [pairedLow, pairedHigh] = pairedInterval(ratios)
    console.log(
      `    paired, the mean of each pair's ratio: ${mean(ratios).toFixed(3)} (90 % interval ${pairedLow.toFixed(3)}–${pairedHigh.toFixed(3)})`
    )
  }
}
