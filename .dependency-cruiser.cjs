// The layering of Waybill's packages, checked by `npm run layering` (part of `npm test`).
// The rules, and why, are in docs/decisions/0070-layering-checked.md.
const fs = require("node:fs")
const path = require("node:path")

// Domain packages: pure rules and orchestration over ports. They import `effect`, `cron-parser`
// (recurring), `node:crypto`/`node:buffer` and each other; never SQL, HTTP or other Node I/O.
const domain = ["core", "filters", "signing", "events", "recurring", "drafts", "webhooks"]

// The package graph, lowest first: a package imports only packages of lower layers, and only
// those its package.json declares.
const layers = [
  ["core"],
  ["filters", "signing"],
  ["events"],
  ["recurring"],
  ["drafts", "webhooks"],
  ["store-pg", "http", "sender"],
  ["console"],
  ["server"]
]

const root = __dirname
const packageDir = (name) => path.join(root, "packages", name)
const declared = (name) => {
  const file = path.join(packageDir(name), "package.json")
  if (!fs.existsSync(file)) return []
  const manifest = JSON.parse(fs.readFileSync(file, "utf8"))
  return Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.devDependencies })
    .filter((dependency) => dependency.startsWith("@waybill/"))
    .map((dependency) => dependency.slice("@waybill/".length))
}
const layerOf = (name) => layers.findIndex((layer) => layer.includes(name))

const packages = layers.flat()
for (const dir of fs.readdirSync(path.join(root, "packages"))) {
  if (fs.existsSync(path.join(packageDir(dir), "package.json")) && !packages.includes(dir)) {
    throw new Error(`packages/${dir} belongs to no layer of .dependency-cruiser.cjs`)
  }
}
const downward = packages.map((name) => {
  const allowed = declared(name).filter((dependency) => layerOf(dependency) >= 0 && layerOf(dependency) < layerOf(name))
  return {
    name: `downward-only-${name}`,
    comment: `@waybill/${name} imports only the lower packages its package.json declares (${allowed.join(", ") || "none"}).`,
    severity: "error",
    from: { path: `^packages/${name}/src/` },
    to: {
      path: "^packages/[^/]+/",
      pathNot: `^packages/(${[name, ...allowed].join("|")})/`
    }
  }
})

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycles, type-only imports included.",
      severity: "error",
      from: {},
      to: { circular: true }
    },
    {
      name: "domain-is-pure",
      comment: `Domain packages (${domain.join(", ")}) import effect, cron-parser, node:crypto, node:buffer and Waybill's packages only: no SQL, HTTP, network or other Node I/O.`,
      severity: "error",
      from: { path: `^packages/(${domain.join("|")})/src/` },
      to: {
        pathNot: ["^packages/", "node_modules/(effect|cron-parser)/", "^(node:)?(crypto|buffer)$"]
      }
    },
    {
      name: "no-internal-across-packages",
      comment:
        "A package's modules in folders under src/ (internal/, service/, …) are its own: nobody else imports them (its tests do).",
      severity: "error",
      from: { path: "^packages/([^/]+)/" },
      to: { path: "^packages/[^/]+/src/[^/]+/", pathNot: "^packages/$1/" }
    },
    {
      name: "no-internal-from-outside",
      comment: "The end-to-end tests, benchmarks, examples and scripts use the packages' public modules.",
      severity: "error",
      from: { path: "^(test|bench|examples|scripts)/" },
      to: { path: "^packages/[^/]+/src/[^/]+/" }
    },
    {
      name: "not-to-unresolvable",
      comment: "Every import resolves.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true }
    },
    ...downward
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^packages/[^/]+/(dist|build)/|\\.d\\.ts$" },
    // Type-only imports count: a cycle through types is still a cycle for the reader.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      // Workspace packages resolve to their sources, as vitest and tsx resolve them.
      conditionNames: ["@waybill/source", "import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".json", ".d.ts"]
    },
    moduleSystems: ["es6", "cjs"],
    combinedDependencies: false,
    preserveSymlinks: false
  }
}
