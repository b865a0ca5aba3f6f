import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { StoreError } from '@maka/stores'
import { makeFileStores, type FileStores } from '../src/index.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import {
  claimAndHeader,
  identity,
  makeTempRoot,
  ownerLock,
  referenceLedger,
  removeTempRoots,
  runHeader,
  sessionRecord,
  shellRun,
} from './fixtures/world.js'

afterAll(removeTempRoots)

const BAD_IDS = ['..', 'a/b', '', 'x'.repeat(129), '.', 'a\\b', 'a b', 'ok\n']
const ok = identity
const anyStale = () => Promise.resolve(true)

// Every method that takes an id, with the bad id placed in each id position it has.
const calls: ReadonlyArray<readonly [string, (s: FileStores, bad: string) => TE.TaskEither<StoreError, unknown>]> = [
  ['sessions.create', (s, bad) => s.sessions.create({ ...sessionRecord(), sessionId: bad as never })],
  ['sessions.read', (s, bad) => s.sessions.read(bad)],
  ['runs.create (sessionId)', (s, bad) => s.runs.create(runHeader({ ...ok, sessionId: bad }))],
  ['runs.create (runId)', (s, bad) => s.runs.create(runHeader({ ...ok, runId: bad }))],
  ['runs.read (sessionId)', (s, bad) => s.runs.read(bad, ok.runId)],
  ['runs.read (runId)', (s, bad) => s.runs.read(ok.sessionId, bad)],
  ['runs.update (sessionId)', (s, bad) => s.runs.update(runHeader({ ...ok, sessionId: bad }))],
  ['runs.update (runId)', (s, bad) => s.runs.update(runHeader({ ...ok, runId: bad }), { durable: true })],
  ['runs.list', (s, bad) => s.runs.list(bad)],
  [
    'events.append (sessionId)',
    (s, bad) => s.events.append(bad, ok.runId, referenceLedger({ ...ok, sessionId: bad })[0]!, { durable: true }),
  ],
  ['events.append (runId)', (s, bad) => s.events.append(ok.sessionId, bad, referenceLedger({ ...ok, runId: bad })[0]!)],
  ['events.read (sessionId)', (s, bad) => s.events.read(bad, ok.runId)],
  ['events.read (runId)', (s, bad) => s.events.read(ok.sessionId, bad)],
  ['shellRuns.write (sessionId)', (s, bad) => s.shellRuns.write(shellRun('shell-1', { sessionId: bad as never }))],
  ['shellRuns.write (shellRunId)', (s, bad) => s.shellRuns.write(shellRun(bad))],
  ['shellRuns.write (runId)', (s, bad) => s.shellRuns.write(shellRun('shell-1', { runId: bad as never }))],
  ['shellRuns.list', (s, bad) => s.shellRuns.list(bad)],
  [
    'claims.claimBoundary (sessionId)',
    (s, bad) => {
      const { claim, header } = claimAndHeader(1)
      return s.claims.claimBoundary({ ...claim, sessionId: bad as never }, { ...header, sessionId: bad as never })
    },
  ],
  [
    'claims.claimBoundary (sourceRunId)',
    (s, bad) => {
      const { claim, header } = claimAndHeader(1)
      return s.claims.claimBoundary({ ...claim, sourceRunId: bad as never }, header)
    },
  ],
  [
    'claims.claimBoundary (targetRunId)',
    (s, bad) => {
      const { claim, header } = claimAndHeader(1)
      return s.claims.claimBoundary({ ...claim, targetRunId: bad as never }, { ...header, runId: bad as never })
    },
  ],
  ['claims.read (sessionId)', (s, bad) => s.claims.read(bad, ok.runId, 1)],
  ['claims.read (sourceRunId)', (s, bad) => s.claims.read(ok.sessionId, bad, 1)],
  ['claims.list', (s, bad) => s.claims.list(bad)],
  ['ownerLocks.read', (s, bad) => s.ownerLocks.read(bad)],
  ['ownerLocks.acquire', (s, bad) => s.ownerLocks.acquire(bad, ownerLock(1), anyStale)],
  ['ownerLocks.release', (s, bad) => s.ownerLocks.release(bad, ownerLock(1))],
]

describe('store id validation', () => {
  describe.each(
    BAD_IDS.map((bad) => [JSON.stringify(bad.length > 20 ? `${bad.slice(0, 8)}…(${bad.length})` : bad), bad]),
  )('when an id is %s', (_label, bad) => {
    it.each(calls)('%s refuses with InvalidId and touches nothing', async (_name, call) => {
      const root = await makeTempRoot()
      const dataDir = join(root, 'data')
      const result = await call(makeFileStores(dataDir), bad)()
      expect(result._tag).toBe('Left')
      expect(result._tag === 'Left' && result.left._tag).toBe('InvalidId')
      // Neither the data dir nor anything beside it (where `..` would lead) was created.
      expect(await readdir(root)).toEqual([])
    })
  })

  describe('when a claim high-water is not an integer ≥ 0', () => {
    it.each([-1, 1.5, Number.NaN])('claims.read refuses %s with InvalidId', async (highWater) => {
      const root = await makeTempRoot()
      const result = await makeFileStores(join(root, 'data')).claims.read(ok.sessionId, ok.runId, highWater)()
      expect(result._tag === 'Left' && result.left._tag).toBe('InvalidId')
      expect(await readdir(root)).toEqual([])
    })
  })
})
