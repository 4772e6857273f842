/**
 * Runs an example when its file is executed directly (`npx tsx examples/embed/src/express.ts`)
 * rather than imported by a test: starts it on `PORT` (default: the example's own port, so that
 * the three run side by side: node:http 3001, Express 3002, Hono 3003), prints where, and closes
 * it on Ctrl-C or SIGTERM.
 *
 * @since 0.1.0
 */
import { pathToFileURL } from "node:url"

/**
 * What every example's `start` returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface Running {
  /** The application's base URL; Waybill is mounted under `${url}/waybill`. */
  readonly url: string
  readonly close: () => Promise<void>
}

/**
 * @since 0.1.0
 * @category utils
 */
export const runIfMain = (moduleUrl: string, start: (port: number) => Promise<Running>, defaultPort: number): void => {
  const script = process.argv[1]
  if (script === undefined || pathToFileURL(script).href !== moduleUrl) return
  start(Number(process.env.PORT ?? defaultPort)).then(
    (running) => {
      console.log(`Listening on ${running.url}; Waybill at ${running.url}/waybill (try ${running.url}/waybill/health)`)
      // Ctrl-C under npx/tsx arrives more than once: the first one closes, repeats wait for it.
      let stopping = false
      const stop = () => {
        if (stopping) return
        stopping = true
        running.close().then(
          () => process.exit(0),
          () => process.exit(1)
        )
      }
      process.on("SIGINT", stop)
      process.on("SIGTERM", stop)
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error)
      process.exit(1)
    }
  )
}
