import { chmod, mkdir, readdir, rename, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  claimsDir,
  ledgerPath,
  makeFileStores,
  runDir,
  sessionDir,
  sessionsDir,
  type FileStores,
} from '../src/index.js'
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
  targetIdentity,
  value,
} from './fixtures/world.js'

afterAll(removeTempRoots)

const { sessionId, runId } = identity
const [userRow, callRow] = referenceLedger()

interface Given {
  readonly stores: FileStores
  readonly dataDir: string
  /** A folder beside the data dir, where links lead "outside". */
  readonly outside: string
}

const given = async (): Promise<Given> => {
  const root = await makeTempRoot()
  const dataDir = join(root, 'data')
  const outside = join(root, 'outside')
  await mkdir(outside)
  const stores = makeFileStores(dataDir)
  await value(stores.sessions.create(sessionRecord()))
  await value(stores.runs.create(runHeader()))
  await value(stores.events.append(sessionId, runId, userRow!, { durable: true }))
  return { stores: makeFileStores(dataDir), dataDir, outside }
}

/** Moves `path` to `outside/<name>` and leaves a link to it in its place. */
const moveOutAndLink = async (path: string, outside: string, name: string): Promise<string> => {
  const moved = join(outside, name)
  await rename(path, moved)
  await symlink(moved, path)
  return moved
}

const expectLinkRefused = (error: unknown, relativePath: string, leadsOutside = true) =>
  expect(error).toMatchObject({ _tag: 'SymlinkInDataDir', relativePath, leadsOutside })

describe('data dir confinement', () => {
  describe('when claims/ is a link that leads outside the data dir', () => {
    it('refuses to claim through it and lists nothing through it; nothing is written outside', async () => {
      const g = await given()
      await mkdir(claimsDir(g.dataDir, sessionId))
      await moveOutAndLink(claimsDir(g.dataDir, sessionId), g.outside, 'claims')
      const { claim, header } = claimAndHeader(1)
      const error = await failure(g.stores.claims.claimBoundary(claim, header))
      expectLinkRefused(error, join('sessions', sessionId, 'claims'))
      expect(error.message).toBe(
        `${join('sessions', sessionId, 'claims')} in the data directory is a symbolic link that leads outside it; maka does not follow links inside its data directory`,
      )
      expectLinkRefused(await failure(g.stores.claims.list(sessionId)), join('sessions', sessionId, 'claims'))
      expect(await readdir(join(g.outside, 'claims'))).toEqual([])
      expect(await failure(g.stores.runs.read(sessionId, targetIdentity.runId))).toMatchObject({ _tag: 'NotFound' })
    })
  })

  describe('when a claim file is a link', () => {
    it('fails the claim list instead of dropping the claim', async () => {
      const g = await given()
      const { claim, header } = claimAndHeader(1)
      await value(g.stores.claims.claimBoundary(claim, header))
      await moveOutAndLink(join(claimsDir(g.dataDir, sessionId), 'run-1@1.json'), g.outside, 'claim.json')
      const fresh = makeFileStores(g.dataDir)
      expectLinkRefused(
        await failure(fresh.claims.list(sessionId)),
        join('sessions', sessionId, 'claims', 'run-1@1.json'),
      )
    })
  })

  describe('when a ledger file is a link that leads outside', () => {
    it('refuses to read or append through it, and the outside file is unchanged', async () => {
      const g = await given()
      const moved = await moveOutAndLink(ledgerPath(g.dataDir, sessionId, runId), g.outside, 'ledger.jsonl')
      const relativePath = join('sessions', sessionId, 'runs', runId, 'runtime-events.jsonl')
      expectLinkRefused(await failure(g.stores.events.read(sessionId, runId)), relativePath)
      expectLinkRefused(await failure(g.stores.events.append(sessionId, runId, callRow!)), relativePath)
      expect((await stat(moved)).size).toBe(rowBytes(userRow!).length)
    })
  })

  describe('when a run folder is a link that leads outside', () => {
    it('lists the run with the link error (never drops it) and refuses every access', async () => {
      const g = await given()
      await moveOutAndLink(runDir(g.dataDir, sessionId, runId), g.outside, 'run')
      const relativePath = join('sessions', sessionId, 'runs', runId)
      const listed = await value(g.stores.runs.list(sessionId))
      expect(listed).toHaveLength(1)
      expectLinkRefused('error' in listed[0]! ? listed[0].error : null, relativePath)
      expectLinkRefused(await failure(g.stores.runs.read(sessionId, runId)), relativePath)
      expectLinkRefused(await failure(g.stores.events.append(sessionId, runId, callRow!)), relativePath)
      expectLinkRefused(await failure(g.stores.runs.update(runHeader(identity, { status: 'running' }))), relativePath)
    })
  })

  describe('when a session folder is a link that leads outside', () => {
    it('lists the session, refuses to read it or take its lock, and writes nothing outside', async () => {
      const g = await given()
      const moved = await moveOutAndLink(sessionDir(g.dataDir, sessionId), g.outside, 'session')
      const before = await readdir(moved)
      const relativePath = join('sessions', sessionId)
      expect(await value(g.stores.sessions.list())).toEqual([sessionId])
      expectLinkRefused(await failure(g.stores.sessions.read(sessionId)), relativePath)
      expectLinkRefused(
        await failure(g.stores.ownerLocks.acquire(sessionId, ownerLock(4242), () => Promise.resolve(false))),
        relativePath,
      )
      expectLinkRefused(await failure(g.stores.shellRuns.write(shellRun())), relativePath)
      expect(await readdir(moved)).toEqual(before)
    })
  })

  describe('when sessions/ itself is a link that leads outside', () => {
    it('refuses to list or create sessions', async () => {
      const g = await given()
      await moveOutAndLink(sessionsDir(g.dataDir), g.outside, 'sessions')
      expectLinkRefused(await failure(g.stores.sessions.list()), 'sessions')
      expectLinkRefused(await failure(g.stores.sessions.create(sessionRecord('session-2'))), 'sessions')
      expect(await readdir(join(g.outside, 'sessions'))).toEqual([sessionId])
    })
  })

  describe('when a link stays inside the data dir', () => {
    it('is refused too (leadsOutside false): one run folder must never alias another', async () => {
      const g = await given()
      const alias = runDir(g.dataDir, sessionId, 'run-alias')
      await symlink(runDir(g.dataDir, sessionId, runId), alias)
      expectLinkRefused(
        await failure(g.stores.runs.read(sessionId, 'run-alias')),
        join('sessions', sessionId, 'runs', 'run-alias'),
        false,
      )
    })
  })

  describe('when the data dir itself is reached through a link', () => {
    it('is used as usual: only what lies below the data dir must be real', async () => {
      const g = await given()
      const linked = join(g.outside, 'data-link')
      await symlink(g.dataDir, linked)
      const stores = makeFileStores(linked)
      expect(await value(stores.sessions.list())).toEqual([sessionId])
      expect((await value(stores.events.append(sessionId, runId, callRow!))).highWater).toBe(2)
    })
  })
})

describe('modes of new files and folders', () => {
  let previous = 0
  beforeEach(() => {
    previous = process.umask()
  })
  afterEach(() => {
    process.umask(previous)
  })

  // 0o022 is the common umask (main created 0644/0755 under it); 0o277 would strip the owner's
  // own write bit if the stores trusted the mode passed to open/mkdir alone.
  for (const umask of [0o022, 0o000, 0o277]) {
    it(`files are 0600 and folders 0700 under umask ${umask.toString(8).padStart(3, '0')}`, async () => {
      process.umask(umask)
      const dataDir = join(await makeTempRoot(), 'data')
      const stores = makeFileStores(dataDir)
      await value(stores.ownerLocks.acquire(sessionId, ownerLock(4242), () => Promise.resolve(false)))
      await value(stores.sessions.create(sessionRecord()))
      await value(stores.runs.create(runHeader()))
      await value(stores.events.append(sessionId, runId, userRow!, { durable: true }))
      await value(stores.runs.update(runHeader(identity, { status: 'running' }), { durable: true }))
      await value(stores.shellRuns.write(shellRun()))
      const { claim, header } = claimAndHeader(1)
      await value(stores.claims.claimBoundary(claim, header))
      process.umask(previous)

      const modes: Record<string, string> = {}
      const walk = async (at: string, name: string): Promise<void> => {
        const info = await stat(at)
        modes[name] = (info.mode & 0o777).toString(8)
        if (info.isDirectory()) {
          for (const entry of await readdir(at)) await walk(join(at, entry), join(name, entry))
        }
      }
      await walk(dataDir, '.')
      const folders = Object.entries(modes).filter(([, mode]) => mode === '700')
      const files = Object.entries(modes).filter(([, mode]) => mode === '600')
      expect(Object.keys(modes).length).toBe(folders.length + files.length)
      expect(files.map(([name]) => name).sort()).toEqual(
        [
          join('.', 'sessions', sessionId, 'owner.lock'),
          join('.', 'sessions', sessionId, 'session.json'),
          join('.', 'sessions', sessionId, 'runs', runId, 'run.json'),
          join('.', 'sessions', sessionId, 'runs', runId, 'runtime-events.jsonl'),
          join('.', 'sessions', sessionId, 'runs', 'run-2', 'run.json'),
          join('.', 'sessions', sessionId, 'shell-runs', 'shell-1.json'),
          join('.', 'sessions', sessionId, 'claims', 'run-1@1.json'),
        ].sort(),
      )
      expect(modes['.']).toBe('700')
    })
  }

  it('tightens a ledger that an older version created with a wider mode on its next append', async () => {
    const g = await given()
    const path = ledgerPath(g.dataDir, sessionId, runId)
    await writeFile(path, rowBytes(userRow!), { mode: 0o644 })
    await chmod(path, 0o644)
    await value(g.stores.events.append(sessionId, runId, callRow!))
    expect((await stat(path)).mode & 0o777).toBe(0o600)
  })
})
