import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  claimPath,
  ledgerPath,
  makeFaultInjectingFs,
  makeFileStores,
  nodeStoreFs,
  ownerLockPath,
  sessionDir,
  syncStoreFs,
  runHeaderPath,
  type Fault,
  type FaultInjectingFs,
  type FileStores,
  type StoreFs,
} from '../src/index.js'
import type { StoreError } from '@maka/stores'
import {
  claimAndHeader,
  failure,
  identity,
  makeTempRoot,
  ownerLock,
  referenceLedger,
  removeTempRoots,
  rowBytes,
  runHeader,
  sessionRecord,
  shellRun,
  value,
} from './fixtures/world.js'

afterAll(removeTempRoots)

const { sessionId, runId } = identity
const [userRow, callRow, responseRow, terminalRow] = referenceLedger()
const ERRNOS = ['ENOSPC', 'EIO', 'EACCES', 'EROFS'] as const
const DETAIL: Record<(typeof ERRNOS)[number], string> = {
  ENOSPC: 'no space left on device',
  EIO: 'input/output error',
  EACCES: 'permission denied',
  EROFS: 'read-only file system',
}

interface Given {
  readonly stores: FileStores
  readonly fs: FaultInjectingFs
  readonly dataDir: string
}

const given = async (setup: (stores: FileStores) => Promise<void>, base: StoreFs = nodeStoreFs): Promise<Given> => {
  const fs = makeFaultInjectingFs(base)
  const stores = makeFileStores(await makeTempRoot(), { fs })
  await setup(stores)
  return { stores, fs, dataDir: stores.dataDir }
}

/** Every file (→ sha256) and folder (→ 'dir') under the data dir. */
const tree = async (dir: string): Promise<Record<string, string>> => {
  const out: Record<string, string> = {}
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      if (entry.isDirectory()) {
        out[relative(dir, path)] = 'dir'
        await walk(path)
      } else {
        out[relative(dir, path)] = createHash('sha256')
          .update(await readFile(path))
          .digest('hex')
      }
    }
  }
  await walk(dir).catch(() => undefined)
  return out
}

const withSession = async (stores: FileStores) => {
  await value(stores.sessions.create(sessionRecord()))
}
const withRun = async (stores: FileStores) => {
  await withSession(stores)
  await value(stores.runs.create(runHeader()))
}
const withRows = async (stores: FileStores) => {
  await withRun(stores)
  if (userRow === undefined || callRow === undefined) throw new Error('reference ledger')
  await value(stores.events.append(sessionId, runId, userRow, { durable: true }))
  await value(stores.events.append(sessionId, runId, callRow))
}

interface Case {
  readonly name: string
  readonly setup: (stores: FileStores) => Promise<void>
  readonly fault: Omit<Fault, 'code'>
  readonly act: (stores: FileStores) => Promise<StoreError>
  readonly operation: string
  readonly subject: string
  /** Entries the failed operation may leave that are fully committed facts (see each case). */
  readonly mayAdd?: ReadonlyArray<string>
  /** The operation again, without the fault: it must now succeed. */
  readonly retry?: (stores: FileStores) => Promise<void>
}

const { claim, header: targetHeader } = claimAndHeader(2)
const lock = ownerLock(4242)
const notStale = () => Promise.resolve(false)

const cases: ReadonlyArray<Case> = [
  {
    name: 'owner-lock create: open of the temp file',
    setup: withSession,
    fault: { call: 'open', path: /\.owner\.lock\..*\.tmp$/ },
    act: (s) => failure(s.ownerLocks.acquire(sessionId, lock, notStale)),
    operation: 'open',
    subject: `create owner.lock of session ${sessionId}`,
    retry: (s) => value(s.ownerLocks.acquire(sessionId, lock, notStale)),
  },
  {
    name: 'owner-lock create: write of the temp file',
    setup: withSession,
    fault: { call: 'write', path: /\.owner\.lock\..*\.tmp$/ },
    act: (s) => failure(s.ownerLocks.acquire(sessionId, lock, notStale)),
    operation: 'write',
    subject: `create owner.lock of session ${sessionId}`,
  },
  {
    name: 'owner-lock create: link',
    setup: withSession,
    fault: { call: 'link', path: /owner\.lock$/ },
    act: (s) => failure(s.ownerLocks.acquire(sessionId, lock, notStale)),
    operation: 'link',
    subject: `create owner.lock of session ${sessionId}`,
    retry: (s) => value(s.ownerLocks.acquire(sessionId, lock, notStale)),
  },
  {
    // The lock was linked but could not be made durable: it is taken back, so this very process
    // can take it again instead of finding its own lock and refusing itself.
    name: 'owner-lock create: fsync of the session folder after the link',
    setup: withSession,
    fault: { call: 'fsync', path: new RegExp(`sessions/${sessionId}$`) },
    act: (s) => failure(s.ownerLocks.acquire(sessionId, lock, notStale)),
    operation: 'fsync',
    subject: `create owner.lock of session ${sessionId}`,
    retry: (s) => value(s.ownerLocks.acquire(sessionId, lock, notStale)),
  },
  {
    name: 'owner-lock create: mkdir of a new session folder',
    setup: () => Promise.resolve(),
    fault: { call: 'mkdir', path: new RegExp(`sessions/${sessionId}$`) },
    act: (s) => failure(s.ownerLocks.acquire(sessionId, lock, notStale)),
    operation: 'mkdir',
    subject: `create owner.lock of session ${sessionId}`,
    // The data dir and sessions/ were made before the failing step; both are empty folders.
    mayAdd: ['sessions'],
  },
  {
    name: 'claim create: link of the claim file',
    setup: withRows,
    fault: { call: 'link', path: /claims\/run-1@2\.json$/ },
    act: (s) => failure(s.claims.claimBoundary(claim, targetHeader)),
    operation: 'link',
    subject: `create the claim run-1@2 of session ${sessionId}`,
    mayAdd: [join('sessions', sessionId, 'claims')],
    retry: (s) => value(s.claims.claimBoundary(claim, targetHeader)),
  },
  {
    name: 'claim create: fsync of the claim temp file',
    setup: withRows,
    fault: { call: 'fsync', path: /\.run-1@2\.json\..*\.tmp$/ },
    act: (s) => failure(s.claims.claimBoundary(claim, targetHeader)),
    operation: 'fsync',
    subject: `create the claim run-1@2 of session ${sessionId}`,
    mayAdd: [join('sessions', sessionId, 'claims')],
  },
  {
    // The claim file is a committed fact once linked: it stays, and recovery closes a claim whose
    // target header never appeared (docs/contract.md §3, "Durable claim").
    name: 'claim create: link of the target header',
    setup: withRows,
    fault: { call: 'link', path: /runs\/run-2\/run\.json$/ },
    act: (s) => failure(s.claims.claimBoundary(claim, targetHeader)),
    operation: 'link',
    subject: `create run.json of run run-2 in session ${sessionId}`,
    mayAdd: [
      join('sessions', sessionId, 'claims'),
      join('sessions', sessionId, 'claims', 'run-1@2.json'),
      join('sessions', sessionId, 'runs', 'run-2'),
    ],
  },
  {
    name: 'header create: link of run.json',
    setup: withSession,
    fault: { call: 'link', path: /run-1\/run\.json$/ },
    act: (s) => failure(s.runs.create(runHeader())),
    operation: 'link',
    subject: `create run.json of run ${runId} in session ${sessionId}`,
    mayAdd: [join('sessions', sessionId, 'runs'), join('sessions', sessionId, 'runs', runId)],
    retry: (s) => value(s.runs.create(runHeader())),
  },
  {
    name: 'header update: rename onto run.json',
    setup: withRows,
    fault: { call: 'rename', path: /run-1\/run\.json$/ },
    act: (s) => failure(s.runs.update(runHeader(identity, { status: 'running' }), { durable: true })),
    operation: 'rename',
    subject: `update run.json of run ${runId} in session ${sessionId}`,
    retry: (s) => value(s.runs.update(runHeader(identity, { status: 'running' }), { durable: true })),
  },
  {
    name: 'header update: fsync of the temp file',
    setup: withRows,
    fault: { call: 'fsync', path: /\.run\.json\..*\.tmp$/ },
    act: (s) => failure(s.runs.update(runHeader(identity, { status: 'running' }), { durable: true })),
    operation: 'fsync',
    subject: `update run.json of run ${runId} in session ${sessionId}`,
  },
  {
    name: 'append: the write',
    setup: withRows,
    fault: { call: 'write', path: /runtime-events\.jsonl$/ },
    act: (s) => failure(s.events.append(sessionId, runId, responseRow!)),
    operation: 'append',
    subject: `append to the ledger of run ${runId} in session ${sessionId}`,
    retry: async (s) => {
      expect(await value(s.events.append(sessionId, runId, responseRow!))).toEqual({ highWater: 3 })
    },
  },
  {
    // A row whose fsync failed might vanish in a crash after being read: it is taken out again.
    name: 'durable append: fsync of the ledger',
    setup: withRows,
    fault: { call: 'fsync', path: /runtime-events\.jsonl$/ },
    act: (s) => failure(s.events.append(sessionId, runId, terminalRow!, { durable: true })),
    operation: 'fsync',
    subject: `append to the ledger of run ${runId} in session ${sessionId}`,
    retry: async (s) => {
      expect(await value(s.events.append(sessionId, runId, terminalRow!, { durable: true }))).toEqual({
        highWater: 3,
      })
    },
  },
  {
    name: 'durable append: fsync of the run folder',
    setup: async (s) => {
      await withRun(s)
      await value(s.events.append(sessionId, runId, userRow!))
    },
    fault: { call: 'fsync', path: /runs\/run-1$/ },
    act: (s) => failure(s.events.append(sessionId, runId, callRow!, { durable: true })),
    operation: 'fsync',
    subject: `append to the ledger of run ${runId} in session ${sessionId}`,
    retry: async (s) => {
      expect(await value(s.events.append(sessionId, runId, callRow!, { durable: true }))).toEqual({ highWater: 2 })
    },
  },
  {
    name: 'session create: mkdir of sessions/',
    setup: () => Promise.resolve(),
    fault: { call: 'mkdir', path: /sessions$/ },
    act: (s) => failure(s.sessions.create(sessionRecord())),
    operation: 'mkdir',
    subject: `create session.json of session ${sessionId}`,
    retry: (s) => value(s.sessions.create(sessionRecord())),
  },
  {
    name: 'shell-run write: rename',
    setup: withRun,
    fault: { call: 'rename', path: /shell-1\.json$/ },
    act: (s) => failure(s.shellRuns.write(shellRun())),
    operation: 'rename',
    subject: `write shell run shell-1 of session ${sessionId}`,
    mayAdd: [join('sessions', sessionId, 'shell-runs')],
  },
]

// The same calls made synchronously (the CLI's short-lived commands, decision 68) must fail the same way.
for (const [label, base] of [
  ['fs/promises', nodeStoreFs],
  ['synchronous calls', syncStoreFs],
] as const) {
  describe(`stores under injected filesystem faults (${label})`, () => {
    for (const c of cases) {
      describe(`when ${c.name} fails`, () => {
        for (const code of ERRNOS) {
          it(`${code}: IoFailed names the operation and the errno, and the disk holds only committed data`, async () => {
            const g = await given(c.setup, base)
            const before = await tree(g.dataDir)
            g.fs.arm({ ...c.fault, code })
            const error = await c.act(g.stores)
            g.fs.disarm()
            expect(g.fs.injected.length).toBeGreaterThan(0)
            expect(error).toMatchObject({ _tag: 'IoFailed', operation: c.operation, code, subject: c.subject })
            expect(error.message).toBe(`could not ${c.subject}: ${DETAIL[code]} (${code} at ${c.operation})`)
            const after = await tree(g.dataDir)
            const allowed = new Set([...Object.keys(before), ...(c.mayAdd ?? [])])
            // Nothing that existed changed, nothing was added beyond the committed facts listed.
            for (const [path, digest] of Object.entries(before)) expect(after[path], path).toBe(digest)
            for (const path of Object.keys(after)) expect(allowed.has(path), `unexpected ${path}`).toBe(true)
            if (c.retry !== undefined) await c.retry(g.stores)
          })
        }
      })
    }
  })
}

describe('stores under injected filesystem faults', () => {
  describe('when the claim file is committed but its target header is not', () => {
    it('keeps the claim file byte for byte as the claim, and a retry is a ClaimConflict', async () => {
      const g = await given(withRows)
      g.fs.arm({ call: 'link', path: /runs\/run-2\/run\.json$/, code: 'ENOSPC' })
      await failure(g.stores.claims.claimBoundary(claim, targetHeader))
      g.fs.disarm()
      expect(await value(g.stores.claims.read(sessionId, 'run-1', 2))).toEqual(claim)
      expect(await failure(g.stores.runs.read(sessionId, 'run-2'))).toMatchObject({ _tag: 'NotFound' })
      expect(await failure(g.stores.claims.claimBoundary(claim, targetHeader))).toMatchObject({
        _tag: 'ClaimConflict',
      })
    })
  })

  describe('when a durable append fails after its row was written', () => {
    it('leaves the ledger exactly as before, so the row is not a fact for any reader', async () => {
      const g = await given(withRows)
      const path = ledgerPath(g.dataDir, sessionId, runId)
      const bytes = await readFile(path)
      g.fs.arm({ call: 'fsync', path: /runtime-events\.jsonl$/, code: 'EIO' })
      await failure(g.stores.events.append(sessionId, runId, terminalRow!, { durable: true }))
      g.fs.disarm()
      expect((await readFile(path)).equals(bytes)).toBe(true)
      const other = makeFileStores(g.dataDir)
      const snapshot = await value(other.events.read(sessionId, runId))
      expect(snapshot.highWater).toBe(2)
      expect(snapshot.tornTail).toBeNull()
      expect(Buffer.concat([rowBytes(userRow!), rowBytes(callRow!)]).equals(bytes)).toBe(true)
    })
  })

  describe('when the owner lock could not be made durable', () => {
    it('does not leave owner.lock behind', async () => {
      const g = await given(withSession)
      g.fs.arm({ call: 'fsync', path: new RegExp(`sessions/${sessionId}$`), code: 'EIO' })
      await failure(g.stores.ownerLocks.acquire(sessionId, lock, notStale))
      g.fs.disarm()
      await expect(readFile(ownerLockPath(g.dataDir, sessionId))).rejects.toMatchObject({ code: 'ENOENT' })
    })
  })

  describe('when the takeover of a stale lock could not be made durable', () => {
    it('gives the lock back to the stale owner instead of leaving this process locked out by its own lock', async () => {
      const g = await given(async (s) => {
        await withSession(s)
        await value(s.ownerLocks.acquire(sessionId, ownerLock(1), notStale))
      })
      g.fs.arm({ call: 'fsync', path: new RegExp(`sessions/${sessionId}$`), code: 'EIO' })
      const error = await failure(g.stores.ownerLocks.acquire(sessionId, lock, () => Promise.resolve(true)))
      g.fs.disarm()
      expect(error).toMatchObject({
        _tag: 'IoFailed',
        operation: 'fsync',
        subject: `create owner.lock of session ${sessionId}`,
      })
      expect(await value(g.stores.ownerLocks.read(sessionId))).toEqual(ownerLock(1))
      expect((await readdir(sessionDir(g.dataDir, sessionId))).filter((n) => n.startsWith('owner.lock.'))).toEqual([])
      await value(g.stores.ownerLocks.acquire(sessionId, lock, () => Promise.resolve(true)))
      expect(await value(g.stores.ownerLocks.read(sessionId))).toEqual(lock)
    })

    it('gives the lock back when owner.lock, rewritten to the new owner, could not be made durable', async () => {
      const g = await given(async (s) => {
        await withSession(s)
        await value(s.ownerLocks.acquire(sessionId, ownerLock(1), notStale))
      })
      // The first folder fsync makes the successor file durable; the second follows the rewrite.
      g.fs.arm({ call: 'fsync', path: new RegExp(`sessions/${sessionId}$`), code: 'EIO', skip: 1 })
      await failure(g.stores.ownerLocks.acquire(sessionId, lock, () => Promise.resolve(true)))
      g.fs.disarm()
      await expect(readFile(ownerLockPath(g.dataDir, sessionId))).rejects.toMatchObject({ code: 'ENOENT' })
      expect(await value(g.stores.ownerLocks.read(sessionId))).toBeNull()
      await value(g.stores.ownerLocks.acquire(sessionId, lock, notStale))
    })
  })

  describe('when a header create fails at the link', () => {
    it('leaves no run.json and no temp file', async () => {
      const g = await given(withSession)
      g.fs.arm({ call: 'link', path: /run\.json$/, code: 'EROFS' })
      await failure(g.stores.runs.create(runHeader()))
      g.fs.disarm()
      await expect(readFile(runHeaderPath(g.dataDir, sessionId, runId))).rejects.toMatchObject({ code: 'ENOENT' })
      expect(await readdir(join(g.dataDir, 'sessions', sessionId, 'runs', runId))).toEqual([])
      await expect(readFile(claimPath(g.dataDir, sessionId, runId, 0))).rejects.toMatchObject({ code: 'ENOENT' })
    })
  })
})
