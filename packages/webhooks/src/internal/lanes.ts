/**
 * Claimed work waiting for a slot, one FIFO lane per webhook, served round robin with at most
 * `perKey` taken at once, so a slow webhook never holds more slots than its own.
 */
export interface Lanes<A> {
  readonly push: (key: string, item: A) => void
  /** The next item of the next ready key, counted as taken; `undefined` when none is ready. */
  readonly take: () => A | undefined
  /** One taken item of `key` finished; its slot frees up. */
  readonly release: (key: string) => void
  readonly heldBy: (key: string) => number
  readonly held: () => number
  /** Each key with work, and how many of its items are waiting or taken. */
  readonly heldByKey: () => IterableIterator<[string, number]>
  /** Every waiting item, taken off its lane whatever its key's slots (a stop gives them back). */
  readonly drain: () => Array<A>
}

interface Lane<A> {
  readonly items: Array<A>
  head: number
  taken: number
  ready: boolean
}

export const make = <A>(perKey: number): Lanes<A> => {
  const lanes = new Map<string, Lane<A>>()
  let ready: Array<string> = []
  let readyHead = 0
  let held = 0

  const waiting = (lane: Lane<A>) => lane.items.length - lane.head

  const markReady = (key: string, lane: Lane<A>) => {
    if (lane.ready || waiting(lane) === 0 || lane.taken >= perKey) return
    lane.ready = true
    ready.push(key)
  }

  const take = (): A | undefined => {
    while (readyHead < ready.length) {
      const key = ready[readyHead++]!
      if (readyHead > 1024 && readyHead * 2 > ready.length) {
        ready = ready.slice(readyHead)
        readyHead = 0
      }
      const lane = lanes.get(key)
      if (lane === undefined) continue
      lane.ready = false
      if (waiting(lane) === 0 || lane.taken >= perKey) continue
      const item = lane.items[lane.head]!
      lane.items[lane.head] = undefined as A
      lane.head++
      if (lane.head === lane.items.length) {
        lane.items.length = 0
        lane.head = 0
      }
      lane.taken++
      // Back of the ring: the other ready keys go first.
      markReady(key, lane)
      return item
    }
    return undefined
  }

  return {
    push: (key, item) => {
      let lane = lanes.get(key)
      if (lane === undefined) {
        lane = { items: [], head: 0, taken: 0, ready: false }
        lanes.set(key, lane)
      }
      lane.items.push(item)
      held++
      markReady(key, lane)
    },
    take,
    release: (key) => {
      const lane = lanes.get(key)
      if (lane === undefined || lane.taken === 0) return
      lane.taken--
      held--
      if (lane.taken === 0 && waiting(lane) === 0) lanes.delete(key)
      else markReady(key, lane)
    },
    heldBy: (key) => {
      const lane = lanes.get(key)
      return lane === undefined ? 0 : waiting(lane) + lane.taken
    },
    held: () => held,
    drain: () => {
      const waitingItems: Array<A> = []
      for (const [key, lane] of lanes) {
        waitingItems.push(...lane.items.slice(lane.head))
        held -= waiting(lane)
        lane.items.length = 0
        lane.head = 0
        if (lane.taken === 0) lanes.delete(key)
      }
      return waitingItems
    },
    heldByKey: function* () {
      for (const [key, lane] of lanes) yield [key, waiting(lane) + lane.taken]
    }
  }
}
