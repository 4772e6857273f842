/**
 * The console's page script and style sheet. A built package ships them prebuilt in
 * `dist/assets` (written by `scripts/bundle.ts` at `npm run build`); run from its sources (the
 * workspace), the console bundles `src/ui` (Preact, the typed client of `@waybill/http` and
 * Effect) with esbuild once per process, on first use, in memory.
 */
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import type { Plugin } from "esbuild"

export interface Bundle {
  readonly script: string
  readonly style: string
}

/** The prebuilt assets' names, relative to the package's `dist/assets/`. */
export const files = { script: "app.js", style: "app.css" } as const

// Beside this module's folder: `dist/assets` once built, `src/assets` (absent) in the sources.
const prebuilt = new URL("../assets/", import.meta.url)

// `node:crypto` becomes the browser stand-in (see browserCrypto.ts).
const browserCrypto: Plugin = {
  name: "browser-crypto",
  setup(builder) {
    builder.onResolve({ filter: /^node:crypto$/ }, () => ({
      path: fileURLToPath(new URL("./browserCrypto.ts", import.meta.url))
    }))
  }
}

/** Bundles `src/ui` with esbuild (a development dependency: only the sources need it). */
export const make = async (): Promise<Bundle> => {
  const { build } = await import("esbuild")
  const result = await build({
    entryPoints: [fileURLToPath(new URL("../ui/main.tsx", import.meta.url))],
    bundle: true,
    write: false,
    outdir: "console",
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    jsx: "automatic",
    jsxImportSource: "preact",
    // The workspace's own packages from their sources (the only place this bundling runs).
    conditions: ["@waybill/source", "module"],
    legalComments: "none",
    logLevel: "silent",
    plugins: [browserCrypto]
  })
  const text = (extension: string) => result.outputFiles.find((file) => file.path.endsWith(extension))?.text ?? ""
  return { script: text(".js"), style: text(".css") }
}

/** The prebuilt assets when the package was built, else a bundle made now. */
export const load = async (): Promise<Bundle> => {
  try {
    const [script, style] = await Promise.all([
      readFile(new URL(files.script, prebuilt), "utf8"),
      readFile(new URL(files.style, prebuilt), "utf8")
    ])
    return { script, style }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
    return make()
  }
}
