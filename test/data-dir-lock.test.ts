/**
 * The embedded data directory's lock under a supervisor that restarts at once: a server killed
 * with SIGKILL is started again on the same directory immediately (0 to 180 ms later), 6 times
 * in a row, and every restart comes up; a second live server on the directory is still refused.
 * Each server is started by a parent that never reaps it (as in a container without an init):
 * a killed server stays a zombie, with its pid still answering `kill(pid, 0)`, while the next
 * one starts.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFile, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Testing from "@waybill/store-pg/Testing"
import { assertJsonLogs } from "./json-logs.js"
import { builtCommandEnv, builtServer } from "./server-process.js"

const root = fileURLToPath(new URL("..", import.meta.url))
// The run's migrated database (the first start runs no initdb): this test is about the lock.
const dataDir = await Testing.makeDataDir("waybill-lock-")
// Every launcher and the pid of its server: both are stopped at the end, by pid.
const started: Array<{ readonly launcher: ChildProcess; readonly server: Promise<number> }> = []
afterAll(async () => {
  for (const { launcher, server } of started) {
    try {
      process.kill(await server, "SIGKILL")
    } catch {
      // Already gone.
    }
    launcher.kill("SIGKILL")
  }
  await rm(dataDir, { recursive: true, force: true })
})

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer()
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

// Starts the server as its child, prints its pid, forwards its output, and never waits for it.
const launcher = `
import os, subprocess, sys, time
server = subprocess.Popen(sys.argv[1:], stdout=sys.stdout, stderr=sys.stderr)
print(server.pid, flush=True)
os.close(0)
time.sleep(600)
`

interface Started {
  /** The launcher: killed at the end, which lets init reap its zombie. */
  readonly child: ChildProcess
  readonly pid: Promise<number>
  readonly output: () => string
  /** Resolves once `/health` answers, or rejects with the output if the process ends first. */
  readonly up: Promise<void>
  readonly exited: Promise<number | null>
}

/** A reference server on the shared data directory (node directly: signals reach it). */
const start = async (): Promise<Started> => {
  const port = await freePort()
  const child = spawn("python3", ["-c", launcher, process.execPath, builtServer], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      // The embedded database: whatever DATABASE_URL the tests run with is not this server's.
      ...builtCommandEnv(process.env),
      WAYBILL_DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      WAYBILL_API_KEYS: "ws-lock:lock-test-key-0001",
      WAYBILL_SECRET_KEY: "cd".repeat(32)
    }
  })
  // The launcher's first line is the server's pid; it then only sleeps, never reaping it.
  const serverPid = new Promise<number>((resolve) =>
    child.stdout!.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().split("\n")[0])))
  )
  started.push({ launcher: child, server: serverPid })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  // The server has ended when its pid is a zombie or gone (its launcher never waits for it).
  const ended = async () => {
    const stat = await readFile(`/proc/${await serverPid}/stat`, "utf8").catch(() => "")
    return stat === "" || stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")
  }
  const exited = (async () => {
    while (!(await ended())) await new Promise((resolve) => setTimeout(resolve, 50))
    return /is in use by process/.test(output) ? 1 : null
  })()
  const up = (async () => {
    const deadline = Date.now() + 60_000
    while (Date.now() < deadline) {
      if (await ended()) throw new Error(`the server ended:\n${output}`)
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
        (response) => response.ok,
        () => false
      )
      if (ok) return
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`the server did not come up:\n${output}`)
  })()
  return { child, pid: serverPid, output: () => output, up, exited }
}

describe("the embedded data directory's lock", () => {
  it("SIGKILL and an immediate restart, 6 times in a row: every restart comes up; a second live server is refused", async () => {
    let server = await start()
    const servers = [server]
    await server.up
    for (let round = 0; round < 6; round++) {
      const pid = await server.pid
      process.kill(pid, "SIGKILL")
      // A supervisor restarting at once, or a moment later: 0, 36, 72 … 180 ms.
      const delay = round * 36
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay))
      server = await start()
      servers.push(server)
      await server.up.catch((error: Error) => assert.fail(`restart ${round + 1} (after ${delay} ms): ${error.message}`))
    }
    const second = await start()
    second.up.catch(() => undefined)
    await second.exited
    assert.include(second.output(), `is in use by process ${await server.pid}`)
    // The first one is unaffected, and still answers.
    await server.up
    // In a JSON run, every line of every server is a JSON record (the launcher's pid line aside).
    for (const run of [...servers, second]) {
      assertJsonLogs(
        run
          .output()
          .split("\n")
          .filter((line) => !/^\d+$/.test(line)),
        "a server"
      )
    }
    // About 10 s a start on a 2-core CI machine beside the other suites (10 restarts took 107 s
    // there; 6 still span the delays); each start has its own 60 s deadline, so a hang still
    // fails, and names its restart.
  }, 900_000)
})
