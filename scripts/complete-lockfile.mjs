/**
 * Completes package-lock.json with the platform-specific optional packages that npm left out.
 *
 * Why: the registry mirror of our build machines lacks some platform builds at their newest
 * versions (e.g. `@rollup/rollup-darwin-arm64@4.68.7`). npm then omits those optional packages
 * from the lock, and `npm ci` refuses the lock as out of sync. This adds, for every optional
 * dependency that is missing, the entry npm writes against a complete registry: version,
 * `optional`, and its `os`/`cpu`/`libc` (read from any published version), so npm skips it on
 * other platforms and installs it where it belongs.
 *
 * Run after `npm install` changes the lock: `node scripts/complete-lockfile.mjs`.
 */
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"

const path = new URL("../package-lock.json", import.meta.url)
const lock = JSON.parse(readFileSync(path, "utf8"))
const packages = lock.packages
const view = (spec, field) => {
  try {
    const out = execFileSync("npm", ["view", spec, field, "--json"], { stdio: ["ignore", "pipe", "ignore"] })
    return out.length === 0 ? undefined : JSON.parse(out.toString())
  } catch {
    return undefined
  }
}

let added = 0
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const parent = location === "" ? "" : `${location}/`
    if (packages[`${parent}node_modules/${name}`] !== undefined || packages[`node_modules/${name}`] !== undefined)
      continue
    const version = /^\d+\.\d+\.\d+$/.test(range) ? range : undefined
    if (version === undefined) continue
    const versions = [].concat(view(name, "versions") ?? [])
    const probe = versions.includes(version) ? version : versions.at(-1)
    const platform = probe === undefined ? {} : (view(`${name}@${probe}`, "os cpu libc --json") ?? {})
    const fields = Array.isArray(platform) ? (platform[0] ?? {}) : platform
    packages[`node_modules/${name}`] = {
      version,
      ...(fields.cpu ? { cpu: [].concat(fields.cpu) } : {}),
      ...(fields.libc ? { libc: [].concat(fields.libc) } : {}),
      optional: true,
      ...(fields.os ? { os: [].concat(fields.os) } : {})
    }
    added++
  }
}

const sorted = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0))
)
lock.packages = sorted
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`complete-lockfile: added ${added} optional platform package(s)`)
