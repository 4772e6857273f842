import { assert, describe, it } from "@effect/vitest"
import type { WorkspaceId } from "@waybill/core/Workspace"
import * as Effect from "effect/Effect"
import { makeMatcher } from "../src/internal/matching.js"
import type { OutboxEvent } from "../src/OutboxReader.js"
import * as WebhookRepository from "../src/WebhookRepository.js"

const event = (n: number): OutboxEvent => ({
  id: `evt_${n}`,
  workspaceId: "ws" as WorkspaceId,
  type: "tour-created",
  createdAt: 1,
  body: "{}",
  traceparent: null,
  position: `${n}`
})

// A repository with no webhooks that counts how often fan-out asks it for subscribers.
const counting = () => {
  const asked = { times: 0 }
  const memory = WebhookRepository.makeMemory()
  const repository = {
    ...memory,
    subscribed: (...args: Parameters<typeof memory.subscribed>) =>
      Effect.zipRight(
        Effect.sync(() => asked.times++),
        memory.subscribed(...args)
      )
  }
  return { asked, matcher: makeMatcher(repository) }
}

describe("fan-out's matching", () => {
  it.effect("reads a workspace's subscribers once while the webhooks' version stays, again when it moves", () =>
    Effect.gen(function* () {
      const { asked, matcher } = counting()
      yield* matcher.deliveriesOf([event(1), event(2)], 0, "7")
      yield* matcher.deliveriesOf([event(3)], 0, "7")
      assert.strictEqual(asked.times, 1)
      yield* matcher.deliveriesOf([event(4)], 0, "8")
      assert.strictEqual(asked.times, 2)
    })
  )

  it.effect("without a version, reads them once per batch", () =>
    Effect.gen(function* () {
      const { asked, matcher } = counting()
      yield* matcher.deliveriesOf([event(1), event(2)], 0)
      yield* matcher.deliveriesOf([event(3)], 0)
      assert.strictEqual(asked.times, 2)
    })
  )
})
