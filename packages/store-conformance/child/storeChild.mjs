// A store client in its own OS process, for the conformance suite's races and kills. It runs under
// plain node and imports the adapter's *built* module, so what is tested is what ships.
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { pathToFileURL } from 'node:url'

const input = JSON.parse(process.argv[2])
const adapter = await import(pathToFileURL(input.module).href)
const stores = await adapter[input.open](input.location)
const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`)

// Parked until the parent kills it: a timer keeps the event loop alive, since a promise that never
// settles alone lets node exit (as it did, now and then, before the parent looked at the pid).
const park = () => new Promise(() => setInterval(() => undefined, 1 << 30))

const waitFor = async (file) => {
  while (!existsSync(file)) await new Promise((done) => setTimeout(done, 2))
}

if (input.mode === 'claim') {
  say({ ready: true })
  await waitFor(input.barrier)
  const result = await stores.claims.claimBoundary(input.claim, input.header)()
  say({ result: result._tag === 'Right' ? 'claimed' : result.left._tag })
} else if (input.mode === 'append') {
  const events = JSON.parse(await readFile(input.eventsFile, 'utf8'))
  say({ ready: true })
  for (const event of events) {
    const result = await stores.events.append(input.sessionId, input.runId, event, { durable: true })()
    if (result._tag === 'Left') {
      say({ error: result.left._tag })
      break
    }
    say({ committed: result.right.highWater })
  }
  // It must never end on its own.
  await park()
} else if (input.mode === 'lock') {
  const lock = input.lock ?? { pid: process.pid, hostname: 'host-a', startedAt: '2026-01-02T03:04:05.678Z' }
  const result = await stores.ownerLocks.acquire(input.sessionId, lock, async () => false)()
  say({ result: result._tag === 'Right' ? 'acquired' : result.left._tag })
  await park()
} else if (input.mode === 'lock-race') {
  // Round after round, races the other children for one stale lock: session `<prefix><round>`
  // once `<barrierDir>/<round>` exists. A lock is stale when its pid is gone. Whatever it wins it
  // keeps (this process stays alive), so a second winner of a round is a second live owner.
  const lock = { pid: process.pid, hostname: 'host-a', startedAt: '2026-01-02T03:04:05.678Z' }
  const isStale = async (existing) => {
    try {
      process.kill(existing.pid, 0)
      return false
    } catch (error) {
      return error.code === 'ESRCH'
    }
  }
  say({ ready: true })
  for (let round = 1; round <= input.rounds; round += 1) {
    await waitFor(`${input.barrierDir}/${round}`)
    const result = await stores.ownerLocks.acquire(`${input.prefix}${round}`, lock, isStale)()
    say({ round, result: result._tag === 'Right' ? 'acquired' : result.left._tag })
  }
  await park()
}
if (stores.close !== undefined) await stores.close()
