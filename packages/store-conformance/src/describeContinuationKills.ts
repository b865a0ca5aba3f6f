/**
 * SIGKILL in the middle of each write of a continuation (issue 14), for a transactional store: a
 * plain-node child runs the executor's write order — claim with target header, durable start row,
 * `running` header, a row, durable terminal row, durable terminal header — and announces each write
 * just before it makes it; the test kills it right then, at every write in turn, twice over. After
 * each kill the adapter checks its own storage (`afterKill`), then the store must hold the invariants
 * the chaos command holds the files to: no claim without its target header and pinned boundary, every
 * ledger whole and holding every acknowledged row, no header ahead of its ledger.
 */
import type { AgentRun } from '@maka/events'
import type { StorePorts } from '@maka/stores'
import { describe, expect, it } from 'vitest'
import { type WriterMessage, killContinuationWriterAt } from './children.js'
import { conformanceRows } from './describeStoreConformance.js'

/**
 * What the kill test needs of an adapter.
 * @category models
 */
export interface ContinuationKillSubject {
  /** What the test promises of the storage after every kill, as the `it` title says it. */
  readonly title: string
  /** The adapter's built module and the name of its opener, for the child. */
  readonly child: { readonly module: string; readonly open: string }
  /** A new, empty store location; the adapter's own test removes it. */
  readonly fresh: () => Promise<string>
  /** Opens an instance over a location; the test closes it. */
  readonly open: (location: string) => StorePorts & { readonly close: () => Promise<void> }
  /** The storage's own checks after a kill, before any instance opens it. */
  readonly afterKill: (location: string) => Promise<void>
}

const STEPS = ['claim', 'start', 'running', 'row', 'terminal', 'header'] as const
const S = 'session-1'
const AT = '2026-01-02T03:04:05.678Z'

const value = async <A>(task: () => Promise<{ _tag: 'Left'; left: unknown } | { _tag: 'Right'; right: A }>) => {
  const result = await task()
  if (result._tag === 'Left') throw new Error(`store failure: ${JSON.stringify(result.left)}`)
  return result.right
}

const checkInvariants = async (stores: StorePorts, acknowledged: ReadonlyArray<WriterMessage>): Promise<void> => {
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

/**
 * Registers the kill test for one adapter.
 * @category constructors
 */
export const describeContinuationKills = (subject: ContinuationKillSubject): void => {
  describe('SIGKILL mid-transaction at each write of a continuation', () => {
    it(
      subject.title,
      async () => {
        const location = await subject.fresh()
        const setup = subject.open(location)
        const source = { sessionId: S, invocationId: 'invocation-1', runId: 'run-1', turnId: 'turn-1' }
        await value(setup.sessions.create({ sessionId: S, cwd: '/work/project', createdAt: AT } as never))
        await value(
          setup.runs.create({
            ...source,
            status: 'failed',
            cwd: '/work/project',
            providerId: 'provider',
            modelId: 'model',
            createdAt: AT,
            updatedAt: AT,
          } as never),
        )
        for (const row of conformanceRows(S, 1, 4)) {
          await value(setup.events.append(S, 'run-1', row, { durable: true }))
        }
        await setup.close()

        const acknowledged: Array<WriterMessage> = []
        for (let round = 0; round < 2; round += 1) {
          for (const step of STEPS) {
            acknowledged.push(
              ...(await killContinuationWriterAt(
                subject.child,
                { location, sessionId: S, sourceRunId: 'run-1' },
                step,
              )),
            )
            await subject.afterKill(location)
            const stores = subject.open(location)
            try {
              await checkInvariants(stores, acknowledged)
            } finally {
              await stores.close()
            }
          }
        }
        // Each kill left the continuation it interrupted for the next writer to move past.
        const stores = subject.open(location)
        try {
          expect((await value(stores.claims.list(S))).length).toBeGreaterThanOrEqual(STEPS.length)
        } finally {
          await stores.close()
        }
      },
      600_000,
    )
  })
}
