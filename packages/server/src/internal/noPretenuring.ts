/**
 * V8's allocation-site pretenuring, off for the server's process (decision 0131), unless node was
 * started with a pretenuring flag of its own. Imported first by `main.ts`, before any module
 * allocates: a site V8 has already chosen to pretenure would stay so.
 *
 * Under steady load V8 took the sites of per-request objects (fibers, continuations, statements)
 * for long-lived and allocated them in old space: a full collection every 5 to 8 s at 200 events
 * a second, whose marking steps (up to 13 ms each) made the tail of `POST /events`.
 */
import { setFlagsFromString } from "node:v8"
import { pretenuringChosen } from "./heapFlags.js"

if (!pretenuringChosen(process.execArgv)) setFlagsFromString("--no-allocation-site-pretenuring")
