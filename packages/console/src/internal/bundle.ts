/**
 * The console's page script and style sheet, bundled by esbuild from `src/ui` (Preact, the typed
 * client of `@waybill/http` and Effect) once per process, on first use, in memory.
 */
import { fileURLToPath } from "node:url"
import { build, type Plugin } from "esbuild"

export interface Bundle {
  readonly script: string
  readonly style: string
}

// `node:crypto` becomes the browser stand-in (see browserCrypto.ts).
const browserCrypto: Plugin = {
  name: "browser-crypto",
  setup(builder) {
    builder.onResolve({ filter: /^node:crypto$/ }, () => ({
      path: fileURLToPath(new URL("./browserCrypto.ts", import.meta.url))
    }))
  }
}

export const make = async (): Promise<Bundle> => {
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
    legalComments: "none",
    logLevel: "silent",
    plugins: [browserCrypto]
  })
  const text = (extension: string) => result.outputFiles.find((file) => file.path.endsWith(extension))?.text ?? ""
  return { script: text(".js"), style: text(".css") }
}
