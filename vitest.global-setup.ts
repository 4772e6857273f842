/**
 * Once per test run, what every suite would otherwise make again and again:
 *
 * - a PGlite data directory with every migration applied, which every suite's embedded database
 *   starts from (`@waybill/store-pg/Testing`): loading it takes about half a second, where a new
 *   PGlite and its migrations take several;
 * - the reference server's two commands (`main.ts`, `keys.ts`) bundled from the sources, for the
 *   tests that run them as processes many times (`WAYBILL_TEST_BUNDLES`): a process then starts
 *   in about a quarter of the CPU time tsx needs to compile the sources on every start. The
 *   documented commands themselves (`npm start`, `npx tsx ...`) are run as written by the docs
 *   and startup tests.
 */
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect } from "effect"
import * as esbuild from "esbuild"

const root = fileURLToPath(new URL(".", import.meta.url))

// Workspace packages are bundled from their sources; every other import stays an import, resolved
// from the repository's node_modules (the bundles live under it). `import.meta.url` keeps naming
// each source file, so files found beside a module (the reference data, the console's assets)
// are found.
const bundle = (directory: string) =>
  esbuild.build({
    entryPoints: ["main", "keys"].map((entry) => join(root, `packages/server/src/${entry}.ts`)),
    outdir: directory,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@waybill/source"],
    sourcemap: "inline",
    logLevel: "warning",
    plugins: [
      {
        name: "workspace-sources",
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith("@waybill/") ? undefined : { path: args.path, external: true }
          )
          build.onLoad({ filter: /\.tsx?$/ }, async (args) => ({
            contents: (await readFile(args.path, "utf8")).replaceAll(
              "import.meta.url",
              JSON.stringify(pathToFileURL(args.path).href)
            ),
            loader: args.path.endsWith(".tsx") ? "tsx" : "ts"
          }))
        }
      }
    ]
  })

export default async function setup(): Promise<() => Promise<void>> {
  const snapshots = await mkdtemp(join(tmpdir(), "waybill-snapshot-"))
  await mkdir(join(root, "node_modules/.cache"), { recursive: true })
  const bundles = await mkdtemp(join(root, "node_modules/.cache/waybill-test-bundles-"))
  const snapshot = join(snapshots, "migrated.tar")
  await Promise.all([Effect.runPromise(Testing.writeSnapshot(snapshot)), bundle(bundles)])
  process.env[Testing.snapshotVariable] = snapshot
  process.env.WAYBILL_TEST_BUNDLES = bundles
  return async () => {
    await rm(snapshots, { recursive: true, force: true })
    await rm(bundles, { recursive: true, force: true })
  }
}
