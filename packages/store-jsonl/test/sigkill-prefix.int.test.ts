import { spawn } from 'node:child_process'
import { access, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CommittedPrefix, FAILPOINTS, type Failpoint, type RuntimeEvent } from '@maka/events'
import { projectResumePlan } from '@maka/projection'
import { afterAll, describe, it } from 'vitest'
import { ledgerPath, makeFileStores } from '../src/index.js'
import { identity, makeTempRoot, referenceLedger, removeTempRoots, runHeader, value } from './fixtures/world.js'

afterAll(removeTempRoots)

const WRITER = fileURLToPath(new URL('./fixtures/prefix-writer.mjs', import.meta.url))
const READY_TIMEOUT_MS = 30_000

interface Child {
  readonly kill: () => Promise<NodeJS.Signals | null>
}

// Spawns the writer under plain node (no loader inherited from the test runner) and resolves once it
// printed `ready`, i.e. after every append resolved.
const spawnWriter = (input: unknown): Promise<Child> =>
  new Promise((resolve, reject) => {
    const env = { ...process.env }
    delete env['NODE_OPTIONS']
    const child = spawn(process.execPath, [WRITER, JSON.stringify(input)], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = new Promise<NodeJS.Signals | null>((done) => child.once('exit', (_code, signal) => done(signal)))
    let stdout = ''
    let stderr = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`writer not ready after ${READY_TIMEOUT_MS} ms: ${stderr}`))
    }, READY_TIMEOUT_MS)
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      if (stdout.includes('ready\n')) {
        clearTimeout(timer)
        resolve({
          kill: () => {
            child.kill('SIGKILL')
            return exited
          },
        })
      }
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`writer exited before ready (code ${code}, signal ${signal}): ${stderr}`))
    })
  })

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  )

const callOf = (ledger: ReadonlyArray<RuntimeEvent>): RuntimeEvent => ledger[1]!

describe('SIGKILL prefix harness', () => {
  describe.concurrent('when the writer is killed after committing a failpoint’s prefix', () => {
    it.for(FAILPOINTS.map((failpoint): [string, Failpoint] => [failpoint.id, failpoint]))(
      '%s: the reopened prefix projects to the table’s decision, twice, without changing a byte',
      async ([, failpoint], { expect }) => {
        const root = await makeTempRoot()
        const dataDir = join(root, 'data')
        const { sessionId, runId } = identity
        await value(makeFileStores(dataDir).runs.create(runHeader()))

        const ledger = referenceLedger()
        const count = CommittedPrefix[failpoint.prefix]
        const lastIndex = ledger.length - 1
        // User and terminal rows are durable appends, as the executor writes them.
        const rows = ledger
          .slice(0, count)
          .map((event, index) => ({ event, durable: index === 0 || index === lastIndex }))
        const markerPath = join(root, 'finally-marker')
        const child = await spawnWriter({ dataDir, sessionId, runId, rows, markerPath })
        expect(await child.kill()).toBe('SIGKILL')
        expect(await exists(markerPath)).toBe(false)

        const path = ledgerPath(dataDir, sessionId, runId)
        const afterKill = await readFile(path)
        const snapshot = await value(makeFileStores(dataDir).events.read(sessionId, runId))
        expect(snapshot.problem).toBeNull()
        expect(snapshot.tornTail).toBeNull()
        expect(snapshot.highWater).toBe(count)
        expect(snapshot.events).toEqual(ledger.slice(0, count))

        const plan = projectResumePlan(snapshot.events, {})
        const again = projectResumePlan(snapshot.events, {})
        expect(again).toEqual(plan)

        const { decision } = failpoint
        expect(plan.disposition).toBe(decision.disposition)
        expect(plan.rejectionReasons).toEqual(decision.rejectionReasons)
        if (decision.operationStatus === 'none') {
          expect(plan.operations).toEqual([])
        } else {
          const expectedStatus = decision.operationStatus === 'completed' ? 'succeeded' : 'indeterminate'
          expect(plan.operations.map((op) => [op.toolCallId, op.status])).toEqual([['call-1', expectedStatus]])
        }
        const call = callOf(ledger)
        expect(plan.replayRuntimeEvents.some((event) => event.id === call.id)).toBe(decision.callInReplay)
        if (failpoint.prefix === 'after_terminal_event') {
          expect(snapshot.events.at(-1)).toEqual(ledger[lastIndex])
        }

        expect((await readFile(path)).equals(afterKill)).toBe(true)
      },
    )
  })
})
