/**
 * Builds every `@waybill/*` package and packs it into a tarball that installs into any Node
 * project, as the registry would serve it:
 *
 *   npm run pack                 tarballs in .waybill/packages
 *   npm run pack -- DIR          tarballs in DIR
 *
 * `test/package.test.ts` installs them into an empty project outside the workspace.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
/** Every publishable package of the workspace, in `packages/`. */
export const packageDirectories = () =>
  readdirSync(join(root, "packages"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join("packages", entry.name))
    .filter((directory) => {
      const manifest = JSON.parse(readFileSync(join(root, directory, "package.json"), "utf8"))
      return manifest.private !== true
    })
/** Runs `npm run build`, then `npm pack` of every package into `destination`. */
export const packAll = (destination) => {
  mkdirSync(destination, { recursive: true })
  execFileSync("npm", ["run", "build"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] })
  const workspaces = packageDirectories().flatMap((directory) => ["--workspace", directory])
  const output = execFileSync("npm", ["pack", "--json", "--pack-destination", resolve(destination), ...workspaces], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024
  })
  const packed = JSON.parse(output.toString())
  return packed.map(({ name, version, filename }) => ({
    name,
    version,
    tarball: join(resolve(destination), filename)
  }))
}
if (process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === import.meta.url) {
  for (const { tarball } of packAll(process.argv[2] ?? join(root, ".waybill/packages"))) console.log(tarball)
}
//# sourceMappingURL=pack.js.map
