/**
 * Installs Waybill's packages into another project from this repository, until they are on the
 * registry (one command; any package, with the Waybill packages it depends on):
 *
 *   npm run install-packages -- ../my-service @waybill/server
 *   npm run install-packages -- ../my-service @waybill/signing
 *
 * It builds and packs every package (`npm run pack`), copies the tarballs the named packages need
 * (them and their `@waybill/*` dependencies, nothing else) into `<project>/waybill-packages/`, pins
 * each of those packages to its tarball in the project's `overrides` (npm would otherwise look
 * the dependencies up on the registry, where they are not), and runs `npm install` of the named
 * ones in the project, with their peer dependencies (`effect`, `@effect/*`) from the registry,
 * written into the project's dependencies unless it names them already (its code imports them).
 * Options after the names go to `npm install` (`--prefer-offline`, ...). Run it again after
 * pulling a new version: it replaces the tarballs and the overrides.
 */
import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { basename, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { packAll, packageDirectories } from "./pack.js"

const root = fileURLToPath(new URL("..", import.meta.url))

/** The folder of the project the tarballs are copied into. */
export const tarballFolder = "waybill-packages"

interface Manifest {
  readonly name: string
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly overrides?: Record<string, unknown>
}

const read = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Manifest

/** Every Waybill package's manifest, by package name. */
const manifestsByName = (): ReadonlyMap<string, Manifest> =>
  new Map(
    packageDirectories().map((directory) => {
      const manifest = read(join(root, directory, "package.json"))
      return [manifest.name, manifest] as const
    })
  )

/** The named packages and every `@waybill/*` package they depend on, directly or not. */
export const closure = (
  names: ReadonlyArray<string>,
  manifests: ReadonlyMap<string, Manifest> = manifestsByName()
): ReadonlyArray<string> => {
  const unknown = names.filter((name) => !manifests.has(name))
  if (unknown.length > 0) {
    throw new Error(`not a Waybill package: ${unknown.join(", ")} (the packages: ${[...manifests.keys()].join(", ")})`)
  }
  const found = new Set<string>()
  const visit = (name: string) => {
    if (found.has(name)) return
    found.add(name)
    for (const dependency of Object.keys(manifests.get(name)?.dependencies ?? {})) {
      if (manifests.has(dependency)) visit(dependency)
    }
  }
  for (const name of names) visit(name)
  return [...found].sort()
}

/** The peer dependencies of some Waybill packages, as `name@range`, each once. */
export const peersOf = (
  names: ReadonlyArray<string>,
  manifests: ReadonlyMap<string, Manifest> = manifestsByName()
): ReadonlyArray<string> => {
  const peers = new Map<string, string>()
  for (const name of names) {
    for (const [peer, range] of Object.entries(manifests.get(name)?.peerDependencies ?? {})) peers.set(peer, range)
  }
  return [...peers].sort(([a], [b]) => a.localeCompare(b)).map(([name, range]) => `${name}@${range}`)
}

/** Packs, copies, pins and installs, as the module's comment says; answers the installed packages. */
export const installPackages = (
  project: string,
  names: ReadonlyArray<string>,
  npmOptions: ReadonlyArray<string> = []
): ReadonlyArray<string> => {
  const manifestPath = join(project, "package.json")
  if (!existsSync(manifestPath)) {
    throw new Error(`${project} has no package.json: run npm init there first (or name your project's folder)`)
  }
  if (names.length === 0) throw new Error("name the packages to install, e.g. @waybill/server")
  const manifests = manifestsByName()
  const needed = closure(names, manifests)
  const packed = packAll(join(root, ".waybill", "packages"))
  const folder = join(project, tarballFolder)
  mkdirSync(folder, { recursive: true })
  // Tarballs of an earlier install (another version) go.
  for (const file of readdirSync(folder)) if (/^waybill-.*\.tgz$/.test(file)) rmSync(join(folder, file))
  const spec = new Map<string, string>()
  for (const { name, tarball } of packed.filter(({ name }) => needed.includes(name))) {
    copyFileSync(tarball, join(folder, basename(tarball)))
    spec.set(name, `file:${tarballFolder}/${basename(tarball)}`)
  }
  // A dependency that is also overridden must have the same spec as its override, so both are written alike.
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Record<string, unknown>
  const overrides = { ...(manifest.overrides as Record<string, unknown> | undefined) }
  for (const name of Object.keys(overrides)) if (name.startsWith("@waybill/")) delete overrides[name]
  for (const [name, file] of spec) overrides[name] = file
  writeFileSync(manifestPath, `${JSON.stringify({ ...manifest, overrides }, null, 2)}\n`)
  const named = {
    ...(manifest.dependencies as object | undefined),
    ...(manifest.devDependencies as object | undefined)
  }
  const peers = peersOf(needed, manifests).filter((peer) => !Object.hasOwn(named, peer.slice(0, peer.lastIndexOf("@"))))
  execFileSync("npm", ["install", ...names.map((name) => spec.get(name)!), ...peers, ...npmOptions], {
    cwd: project,
    stdio: "inherit"
  })
  return needed
}

if (process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const [project, ...rest] = process.argv.slice(2)
  const names = rest.filter((word) => !word.startsWith("-"))
  const options = rest.filter((word) => word.startsWith("-"))
  if (project === undefined) {
    console.error("usage: npm run install-packages -- <your project's folder> <package...> [npm install options]")
    process.exit(2)
  }
  try {
    // npm runs scripts in the repository's root; a relative folder is the caller's.
    const folder = resolve(process.env.INIT_CWD ?? process.cwd(), project)
    const installed = installPackages(folder, names, options)
    console.log(`Installed ${names.join(", ")} in ${folder} (with ${installed.join(", ")}, from ${tarballFolder}/)`)
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error))
    process.exit(1)
  }
}
