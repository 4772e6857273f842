/**
 * Runs the example receiver: `npm start -w @waybill/example-receiver` (or
 * `npx tsx examples/receiver/src/main.ts`), configured from the environment (see Config.ts).
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import { fromEnv } from "./Config.js"
import { start } from "./Server.js"

const config = fromEnv(process.env)
if (Either.isLeft(config)) {
  console.error(`receiver: invalid configuration: ${config.left}`)
  process.exit(1)
}
const running = await start(config.right)
console.log(`receiver listening on ${running.url} (auth: ${config.right.credentials.type})`)

const stop = () => {
  running.close().then(
    () => process.exit(0),
    () => process.exit(1)
  )
}
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
