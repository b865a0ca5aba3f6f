/**
 * SIGKILL in the middle of each write of a continuation (issue 14): a plain-node child runs the
 * executor's write order — claim with target header, durable start row, `running` header, a row,
 * durable terminal row, durable terminal header — and announces each write just before it makes
 * it; the test kills it right then, at every write in turn. After each kill the database must pass
 * SQLite's own integrity check and the invariants the chaos command holds the files to: no claim
 * without its target header and pinned boundary, every ledger whole and holding every acknowledged
 * row, no header ahead of its ledger.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type WriterMessage, conformanceRows, killContinuationWriterAt } from '@maka/store-conformance'
import type { AgentRun } from '@maka/events'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStores, type SqliteStores } from '../src/index.js'

const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))
const STEPS = ['claim', 'start', 'running', 'row', 'terminal', 'header'] as const
const S = 'session-1'
const dirs: Array<string> = []
afterAll(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

type Message = WriterMessage

// Runs the writer until it announces `step` of a continuation after those already made, then kills it.
const killAt = (file: string, step: string): Promise<ReadonlyArray<Message>> =>
  killContinuationWriterAt(
    { module: DIST, open: 'openSqliteStores' },
    { location: file, sessionId: S, sourceRunId: 'run-1' },
    step,
  )

const value = async <A>(task: () => Promise<{ _tag: 'Left'; left: unknown } | { _tag: 'Right'; right: A }>) => {
  const result = await task()
  if (result._tag === 'Left') throw new Error(`store failure: ${JSON.stringify(result.left)}`)
  return result.right
}

const checkInvariants = async (stores: SqliteStores, file: string, acknowledged: ReadonlyArray<Message>) => {
  const db = new Database(file, { readonly: true })
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
  } finally {
    db.close()
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
  it('leaves a database that opens intact, with every invariant held, at every write', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'maka-sqlite-kill-'))
    dirs.push(dir)
    const file = join(dir, 'maka.sqlite')
    const setup = openSqliteStores(file)
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
        acknowledged.push(...(await killAt(file, step)))
        const stores = openSqliteStores(file)
        try {
          await checkInvariants(stores, file, acknowledged)
        } finally {
          await stores.close()
        }
      }
    }
    // Each kill left the continuation it interrupted for the next writer to move past.
    const stores = openSqliteStores(file)
    expect((await value(stores.claims.list(S))).length).toBeGreaterThanOrEqual(STEPS.length)
    await stores.close()
  }, 600_000)
})
