/**
 * SIGKILL in the middle of each write of a continuation (issue 14), as for SQLite: a plain-node
 * child runs the executor's write order — claim with target header, durable start row, `running`
 * header, a row, durable terminal row, durable terminal header — and announces each write just
 * before it makes it; the test kills it right then, at every write in turn. The server rolls back
 * what the dead client left open; after each kill the database must hold the invariants the chaos
 * command holds the files to: no claim without its target header and pinned boundary, every ledger
 * whole and holding every acknowledged row, no header ahead of its ledger — and no session lock or
 * transaction of the dead client left behind.
 */
import { fileURLToPath } from 'node:url'
import { type WriterMessage, conformanceRows, killContinuationWriterAt } from '@maka/store-conformance'
import type { AgentRun } from '@maka/events'
import { afterAll, describe, expect, it } from 'vitest'
import { openPostgresStores, type PostgresStores } from '../src/index.js'
import { dropDatabase, freshDatabase, onDatabase } from './support.js'

const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))
const STEPS = ['claim', 'start', 'running', 'row', 'terminal', 'header'] as const
const S = 'session-1'
const databases: Array<string> = []
afterAll(async () => {
  for (const url of databases.splice(0)) await dropDatabase(url)
})

type Message = WriterMessage

// Runs the writer until it announces `step` of a continuation after those already made, then kills it.
const killAt = (url: string, step: string): Promise<ReadonlyArray<Message>> =>
  killContinuationWriterAt(
    { module: DIST, open: 'openPostgresStores' },
    { location: url, sessionId: S, sourceRunId: 'run-1' },
    step,
  )

const value = async <A>(task: () => Promise<{ _tag: 'Left'; left: unknown } | { _tag: 'Right'; right: A }>) => {
  const result = await task()
  if (result._tag === 'Left') throw new Error(`store failure: ${JSON.stringify(result.left)}`)
  return result.right
}

const checkInvariants = async (stores: PostgresStores, url: string, acknowledged: ReadonlyArray<Message>) => {
  // The dead client's connections are gone from the server, with their locks and open transactions.
  const database = new URL(url).pathname.slice(1)
  for (let waited = 0; ; waited += 1) {
    const left = await onDatabase(url, async (c) => {
      const others = await c.query(
        'SELECT count(*)::integer AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      )
      return (others.rows[0] as { n: number }).n
    })
    // The checking instance has not connected yet: any other connection is the dead writer's.
    if (left === 0) break
    if (waited > 600) throw new Error(`the dead writer's ${left} connection(s) are still on the server`)
    await new Promise((done) => setTimeout(done, 100))
  }
  const claims = await value(stores.claims.list(S))
  const runs = await value(stores.runs.list(S))
  const headers = new Map<string, AgentRun>(
    runs.flatMap((entry) => ('header' in entry ? [[entry.runId, entry.header] as const] : [])),
  )
  expect(runs.every((entry) => 'header' in entry)).toBe(true)
  for (const claim of claims) {
    const header = headers.get(claim.targetRunId)
    expect(header, `target of claim ${claim.sourceRunId}@${claim.sourceRuntimeEventHighWater}`).toBeDefined()
    expect(header!.continuationSource?.sourceRuntimeEventHighWater).toBe(claim.sourceRuntimeEventHighWater)
  }
  for (const entry of runs) {
    const ledger = await value(stores.events.read(S, entry.runId))
    expect(ledger.problem, `ledger of ${entry.runId}`).toBeNull()
    const header = 'header' in entry ? entry.header : null
    if (header?.continuationSource !== undefined) {
      // The start row commits before anything else of the run; a terminal header follows its terminal row.
      if (ledger.highWater > 0) expect(ledger.events[0]!.actions?.stateDelta).toEqual({ continuationStart: true })
      if (header.status === 'completed') expect(ledger.events.at(-1)!.status).toBe('completed')
      if (header.status === 'running') expect(ledger.highWater).toBeGreaterThan(0)
    }
  }
  // Everything the writer was told had committed is there.
  for (const message of acknowledged) {
    const k = message['k'] as number
    const done = message['done'] as string | undefined
    if (done === undefined) continue
    const header = headers.get(`run-c${k}`)
    expect(header, `run-c${k} after ${done}`).toBeDefined()
    const rows = (await value(stores.events.read(S, `run-c${k}`))).highWater
    const expectedRows = { claim: 0, start: 1, running: 1, row: 1, terminal: 3, header: 3 }[done] ?? 0
    expect(rows, `rows of run-c${k} after ${done}`).toBeGreaterThanOrEqual(expectedRows)
    if (done === 'header') expect(header!.status).toBe('completed')
  }
}

describe('SIGKILL mid-transaction at each write of a continuation', () => {
  it('leaves every invariant held and nothing of the dead client on the server, at every write', async () => {
    const url = await freshDatabase()
    databases.push(url)
    const setup = openPostgresStores(url)
    const source = { sessionId: S, invocationId: 'invocation-1', runId: 'run-1', turnId: 'turn-1' }
    const rows = conformanceRows(S, 1, 4)
    await value(
      setup.sessions.create({
        sessionId: S,
        cwd: '/work/project',
        createdAt: '2026-01-02T03:04:05.678Z',
      } as never),
    )
    await value(
      setup.runs.create({
        ...source,
        status: 'failed',
        cwd: '/work/project',
        providerId: 'provider',
        modelId: 'model',
        createdAt: '2026-01-02T03:04:05.678Z',
        updatedAt: '2026-01-02T03:04:05.678Z',
      } as never),
    )
    for (const row of rows) await value(setup.events.append(S, 'run-1', row, { durable: true }))
    await setup.close()

    const acknowledged: Array<Message> = []
    for (let round = 0; round < 2; round += 1) {
      for (const step of STEPS) {
        acknowledged.push(...(await killAt(url, step)))
        const stores = openPostgresStores(url)
        try {
          await checkInvariants(stores, url, acknowledged)
        } finally {
          await stores.close()
        }
      }
    }
    // Each kill left the continuation it interrupted for the next writer to move past.
    const stores = openPostgresStores(url)
    expect((await value(stores.claims.list(S))).length).toBeGreaterThanOrEqual(STEPS.length)
    await stores.close()
  }, 600_000)
})
