import { assert } from "@effect/vitest"

/**
 * Runs `f` with the process time zone set to `zone` (Node re-reads `TZ` when it is assigned),
 * then restores it. Asserts that the switch took effect, so a test relying on it cannot pass
 * vacuously.
 */
export const withTimeZone = <A>(zone: string | undefined, f: () => A): A => {
  if (zone === undefined) return f()
  const before = process.env.TZ
  process.env.TZ = zone
  try {
    const january = new Date(Date.UTC(2027, 0, 15, 12)).getTimezoneOffset()
    const expected: Record<string, number> = { UTC: 0, "America/New_York": 300, "Pacific/Chatham": -825 }
    if (zone in expected) assert.strictEqual(january, expected[zone], `process time zone is not ${zone}`)
    return f()
  } finally {
    if (before === undefined) delete process.env.TZ
    else process.env.TZ = before
  }
}
