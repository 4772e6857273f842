import { defineConfig } from "vitest/config"

// One project for the pure and storage packages, one for end-to-end tests over real HTTP.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "packages",
          include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
          setupFiles: ["./vitest.setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000
        }
      },
      {
        test: {
          name: "e2e",
          include: ["test/**/*.test.ts"],
          setupFiles: ["./vitest.setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000
        }
      }
    ]
  }
})
