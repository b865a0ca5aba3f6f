import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  claimPath,
  makeFileStores,
  ownerLockPath,
  runDir,
  runHeaderPath,
  sessionDir,
  shellRunPath,
  type FileStores,
} from '../src/index.js'
import {
  claimAndHeader,
  failure,
  identity,
  makeTempRoot,
  ownerLock,
  removeTempRoots,
  runHeader,
  sessionRecord,
  shellRun,
  targetIdentity,
  value,
} from './fixtures/world.js'

afterAll(removeTempRoots)

const { sessionId, runId } = identity
const givenStores = async (): Promise<FileStores> => makeFileStores(await makeTempRoot())

describe('SessionStore', () => {
  describe('when a session is created', () => {
    it('reads it back and lists it', async () => {
      const stores = await givenStores()
      await value(stores.sessions.create(sessionRecord()))
      expect(await value(stores.sessions.read(sessionId))).toEqual(sessionRecord())
      expect(await value(stores.sessions.list())).toEqual([sessionId])
    })

    it('refuses a second create with SessionAlreadyExists and keeps the first header', async () => {
      const stores = await givenStores()
      await value(stores.sessions.create(sessionRecord()))
      const path = join(sessionDir(stores.dataDir, sessionId), 'session.json')
      const before = await readFile(path)
      const error = await failure(stores.sessions.create({ ...sessionRecord(), title: 'another' }))
      expect(error._tag).toBe('SessionAlreadyExists')
      expect((await readFile(path)).equals(before)).toBe(true)
    })
  })

  describe('when the data dir has no sessions folder', () => {
    it('lists nothing', async () => {
      expect(await value((await givenStores()).sessions.list())).toEqual([])
    })
  })

  describe('when the sessions folder holds other entries', () => {
    it('lists only folders named by safe ids, sorted', async () => {
      const stores = await givenStores()
      await mkdir(join(stores.dataDir, 'sessions', 'b-session'), { recursive: true })
      await mkdir(join(stores.dataDir, 'sessions', 'a-session'), { recursive: true })
      await mkdir(join(stores.dataDir, 'sessions', 'not.safe'), { recursive: true })
      await writeFile(join(stores.dataDir, 'sessions', 'c-file'), '')
      expect(await value(stores.sessions.list())).toEqual(['a-session', 'b-session'])
    })
  })

  describe('when session.json is missing', () => {
    it('reports NotFound', async () => {
      expect((await failure((await givenStores()).sessions.read(sessionId)))._tag).toBe('NotFound')
    })
  })
})

describe('AgentRunStore', () => {
  describe('when a header is created, updated and read', () => {
    it('round-trips it and leaves no temp file behind', async () => {
      const stores = await givenStores()
      await value(stores.runs.create(runHeader()))
      expect(await value(stores.runs.read(sessionId, runId))).toEqual(runHeader())
      const running = runHeader(identity, { status: 'running' })
      await value(stores.runs.update(running))
      expect(await value(stores.runs.read(sessionId, runId))).toEqual(running)
      const failed = runHeader(identity, { status: 'failed', failureClass: 'app_restarted' as never })
      await value(stores.runs.update(failed, { durable: true }))
      expect(await value(stores.runs.read(sessionId, runId))).toEqual(failed)
      expect(await readdir(runDir(stores.dataDir, sessionId, runId))).toEqual(['run.json'])
    })
  })

  describe('when a second header is created for the same run', () => {
    it('refuses with RunAlreadyExists and keeps the first header’s bytes', async () => {
      const stores = await givenStores()
      await value(stores.runs.create(runHeader()))
      const path = runHeaderPath(stores.dataDir, sessionId, runId)
      const before = await readFile(path)
      const error = await failure(stores.runs.create(runHeader(identity, { status: 'running' })))
      expect(error).toMatchObject({ _tag: 'RunAlreadyExists', sessionId, runId })
      expect((await readFile(path)).equals(before)).toBe(true)
    })
  })

  describe('when two creates of one run race', () => {
    it('lets exactly one win', async () => {
      const stores = await givenStores()
      const other = makeFileStores(stores.dataDir)
      const results = await Promise.all([stores.runs.create(runHeader())(), other.runs.create(runHeader())()])
      expect(results.filter((r) => r._tag === 'Right')).toHaveLength(1)
    })
  })

  describe('when a header is updated that was never created', () => {
    it('reports NotFound and creates nothing', async () => {
      const stores = await givenStores()
      expect((await failure(stores.runs.update(runHeader())))._tag).toBe('NotFound')
      await expect(readFile(runHeaderPath(stores.dataDir, sessionId, runId))).rejects.toThrow()
    })
  })

  describe('when a header is invalid on disk', () => {
    it.each([
      ['not JSON', '{ nope'],
      ['an unknown key', JSON.stringify({ ...runHeader(), extra: 1 })],
      ['another run’s header', JSON.stringify(runHeader({ ...identity, runId: 'run-9' }))],
    ])('reports Unreadable for %s', async (_name, content) => {
      const stores = await givenStores()
      await mkdir(runDir(stores.dataDir, sessionId, runId), { recursive: true })
      await writeFile(runHeaderPath(stores.dataDir, sessionId, runId), content)
      expect((await failure(stores.runs.read(sessionId, runId)))._tag).toBe('Unreadable')
    })
  })

  describe('when a session has readable and unreadable runs', () => {
    it('lists every run folder, unreadable ones with their error', async () => {
      const stores = await givenStores()
      await value(stores.runs.create(runHeader()))
      await value(stores.runs.create(runHeader(targetIdentity)))
      await mkdir(runDir(stores.dataDir, sessionId, 'run-3'), { recursive: true })
      await mkdir(runDir(stores.dataDir, sessionId, 'run-4'), { recursive: true })
      await writeFile(runHeaderPath(stores.dataDir, sessionId, 'run-4'), 'garbage')
      const listings = await value(stores.runs.list(sessionId))
      expect(listings.map((l) => [l.runId, 'header' in l ? 'header' : l.error._tag])).toEqual([
        ['run-1', 'header'],
        ['run-2', 'header'],
        ['run-3', 'NotFound'],
        ['run-4', 'Unreadable'],
      ])
    })

    it('lists nothing for a session without runs', async () => {
      expect(await value((await givenStores()).runs.list(sessionId))).toEqual([])
    })
  })

  describe('when a record does not have its exact shape', () => {
    it('refuses with InvalidRecord and creates nothing', async () => {
      const stores = await givenStores()
      const error = await failure(stores.runs.create({ ...runHeader(), status: 'exploded' } as never))
      expect(error._tag).toBe('InvalidRecord')
      expect(await readdir(stores.dataDir)).toEqual([])
    })
  })
})

describe('ShellRunStore', () => {
  describe('when shell runs are written and rewritten', () => {
    it('lists the latest record of each, sorted, skipping temp and foreign files', async () => {
      const stores = await givenStores()
      await value(stores.shellRuns.write(shellRun('shell-2')))
      await value(stores.shellRuns.write(shellRun('shell-1')))
      const finished = shellRun('shell-1', {
        status: 'completed',
        exitCode: 0,
        endedAt: '2026-01-02T03:05:00.000Z' as never,
      })
      await value(stores.shellRuns.write(finished))
      await writeFile(join(stores.dataDir, 'sessions', sessionId, 'shell-runs', '.shell-3.json.1.tmp'), '{')
      await writeFile(join(stores.dataDir, 'sessions', sessionId, 'shell-runs', 'README.txt'), 'x')
      expect(await value(stores.shellRuns.list(sessionId))).toEqual([
        { shellRunId: 'shell-1', shellRun: finished },
        { shellRunId: 'shell-2', shellRun: shellRun('shell-2') },
      ])
    })
  })

  describe('when a shell-run file is unreadable', () => {
    it('lists it with its error', async () => {
      const stores = await givenStores()
      await value(stores.shellRuns.write(shellRun('shell-1')))
      await writeFile(shellRunPath(stores.dataDir, sessionId, 'shell-1'), '{')
      const [listing] = await value(stores.shellRuns.list(sessionId))
      expect(listing && 'error' in listing && listing.error._tag).toBe('Unreadable')
    })
  })

  describe('when a session has no shell runs', () => {
    it('lists nothing', async () => {
      expect(await value((await givenStores()).shellRuns.list(sessionId))).toEqual([])
    })
  })
})

describe('ClaimStore', () => {
  describe('when a boundary is claimed', () => {
    it('writes the claim and the target header, and reads and lists the claim', async () => {
      const stores = await givenStores()
      const { claim, header } = claimAndHeader(3)
      await value(stores.claims.claimBoundary(claim, header))
      expect(await value(stores.claims.read(sessionId, runId, 3))).toEqual(claim)
      expect(await value(stores.claims.list(sessionId))).toEqual([claim])
      expect(await value(stores.runs.read(sessionId, targetIdentity.runId))).toEqual(header)
    })
  })

  describe('when the same boundary is claimed twice', () => {
    it('refuses the second with ClaimConflict carrying the existing claim', async () => {
      const stores = await givenStores()
      const first = claimAndHeader(3)
      await value(stores.claims.claimBoundary(first.claim, first.header))
      const path = claimPath(stores.dataDir, sessionId, runId, 3)
      const before = await readFile(path)
      const second = claimAndHeader(3, { ...targetIdentity, runId: 'run-3', invocationId: 'inv-3', turnId: 'turn-3' })
      const error = await failure(stores.claims.claimBoundary(second.claim, second.header))
      expect(error).toMatchObject({ _tag: 'ClaimConflict', existing: first.claim })
      expect((await readFile(path)).equals(before)).toBe(true)
      await expect(readFile(runHeaderPath(stores.dataDir, sessionId, 'run-3'))).rejects.toThrow()
    })
  })

  describe('when the target header already exists', () => {
    it('refuses with RunAlreadyExists after the claim and keeps the existing header', async () => {
      const stores = await givenStores()
      const existing = runHeader(targetIdentity)
      await value(stores.runs.create(existing))
      const { claim, header } = claimAndHeader(2)
      expect((await failure(stores.claims.claimBoundary(claim, header)))._tag).toBe('RunAlreadyExists')
      expect(await value(stores.runs.read(sessionId, targetIdentity.runId))).toEqual(existing)
      // The claim stays: recovery repairs a claim whose target never started, so the boundary reads as taken.
      expect(await value(stores.claims.read(sessionId, runId, 2))).toEqual(claim)
    })
  })

  describe('when the target header does not match the claim', () => {
    it('refuses with InvalidRecord and writes nothing', async () => {
      const stores = await givenStores()
      const { claim, header } = claimAndHeader(2)
      const error = await failure(stores.claims.claimBoundary(claim, { ...header, runId: 'run-7' as never }))
      expect(error._tag).toBe('InvalidRecord')
      expect(await readdir(stores.dataDir)).toEqual([])
    })
  })

  describe('when a boundary is unclaimed', () => {
    it('reads null and lists nothing', async () => {
      const stores = await givenStores()
      expect(await value(stores.claims.read(sessionId, runId, 0))).toBeNull()
      expect(await value(stores.claims.list(sessionId))).toEqual([])
    })
  })

  describe('when a claim file is unreadable', () => {
    it('fails the list instead of dropping the claim', async () => {
      const stores = await givenStores()
      const { claim, header } = claimAndHeader(1)
      await value(stores.claims.claimBoundary(claim, header))
      await writeFile(claimPath(stores.dataDir, sessionId, runId, 4), '{')
      expect((await failure(stores.claims.list(sessionId)))._tag).toBe('Unreadable')
      expect((await failure(stores.claims.read(sessionId, runId, 4)))._tag).toBe('Unreadable')
    })
  })
})

describe('OwnerLockStore', () => {
  const never = () => Promise.resolve(false)
  const always = () => Promise.resolve(true)

  describe('when a session has no owner', () => {
    it('reads null, and acquire takes the lock', async () => {
      const stores = await givenStores()
      expect(await value(stores.ownerLocks.read(sessionId))).toBeNull()
      await value(stores.ownerLocks.acquire(sessionId, ownerLock(100), never))
      expect(await value(stores.ownerLocks.read(sessionId))).toEqual(ownerLock(100))
    })
  })

  describe('when another owner holds a live lock', () => {
    it('refuses with OwnerLockHeld and leaves the lock', async () => {
      const stores = await givenStores()
      await value(stores.ownerLocks.acquire(sessionId, ownerLock(100), never))
      const seen: Array<unknown> = []
      const error = await failure(
        stores.ownerLocks.acquire(sessionId, ownerLock(200), (existing) => {
          seen.push(existing)
          return Promise.resolve(false)
        }),
      )
      expect(error).toMatchObject({ _tag: 'OwnerLockHeld', existing: ownerLock(100) })
      expect(seen).toEqual([ownerLock(100)])
      expect(await value(stores.ownerLocks.read(sessionId))).toEqual(ownerLock(100))
    })
  })

  describe('when the existing lock is stale', () => {
    it('takes it over', async () => {
      const stores = await givenStores()
      await value(stores.ownerLocks.acquire(sessionId, ownerLock(100), never))
      await value(stores.ownerLocks.acquire(sessionId, ownerLock(200), always))
      expect(await value(stores.ownerLocks.read(sessionId))).toEqual(ownerLock(200))
      expect(await readdir(sessionDir(stores.dataDir, sessionId))).toEqual(['owner.lock'])
    })
  })

  describe('when the same owner acquires twice', () => {
    it('refuses the second acquire without asking whether the lock is stale', async () => {
      const stores = await givenStores()
      await value(stores.ownerLocks.acquire(sessionId, ownerLock(100), never))
      let asked = false
      const error = await failure(
        stores.ownerLocks.acquire(sessionId, ownerLock(100), () => {
          asked = true
          return Promise.resolve(true)
        }),
      )
      expect(error._tag).toBe('OwnerLockHeld')
      expect(asked).toBe(false)
    })
  })

  describe('when the staleness check throws', () => {
    it('refuses with StaleCheckFailed and leaves the lock', async () => {
      const stores = await givenStores()
      await value(stores.ownerLocks.acquire(sessionId, ownerLock(100), never))
      const error = await failure(
        stores.ownerLocks.acquire(sessionId, ownerLock(200), () => Promise.reject(new Error('ps failed'))),
      )
      expect(error._tag).toBe('StaleCheckFailed')
      expect(await value(stores.ownerLocks.read(sessionId))).toEqual(ownerLock(100))
    })
  })

  describe('when a lock is released', () => {
    it('removes only the caller’s own lock', async () => {
      const stores = await givenStores()
      await value(stores.ownerLocks.acquire(sessionId, ownerLock(100), never))
      const error = await failure(stores.ownerLocks.release(sessionId, ownerLock(200)))
      expect(error._tag).toBe('OwnerLockHeld')
      expect(await value(stores.ownerLocks.read(sessionId))).toEqual(ownerLock(100))
      await value(stores.ownerLocks.release(sessionId, ownerLock(100)))
      expect(await value(stores.ownerLocks.read(sessionId))).toBeNull()
      await expect(readFile(ownerLockPath(stores.dataDir, sessionId))).rejects.toThrow()
      // Releasing a lock that is already gone is not an error.
      await value(stores.ownerLocks.release(sessionId, ownerLock(100)))
    })
  })
})
