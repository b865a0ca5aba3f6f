/**
 * Startup recovery where the data directory refuses it — by its permissions (EROFS, EACCES, EPERM
 * injected at the stores' filesystem port) or by its layout (a symbolic link, a file where a folder
 * belongs, made for real): the session is reported in `unwritable` with what its survey found to
 * repair, and when a read can meet the refusal before the lock, nothing at all is written. A
 * failure that is no refusal (ENOSPC) is reported as before, and other sessions are repaired.
 */
import { createHash } from 'node:crypto'
import { lstat, readFile, readdir, readlink, rename, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import type { AgentRun, RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { makeFaultInjectingFs, makeFileStores, nodeStoreFs } from '@maka/store-jsonl'
import { trackWorlds, type World } from './support/world.js'

const world = trackWorlds()

/** Every entry below `dir` with its type, mode, size, mtime and content (or link target). */
const snapshot = async (dir: string): Promise<ReadonlyArray<string>> => {
  const lines: Array<string> = []
  const walk = async (path: string, rel: string): Promise<void> => {
    const stat = await lstat(path)
    const head = `${rel} mode=${stat.mode.toString(8)} size=${stat.size} mtime=${stat.mtimeMs}`
    if (stat.isSymbolicLink()) lines.push(`${head} link=${await readlink(path)}`)
    else if (stat.isDirectory()) {
      lines.push(`${head} dir`)
      for (const name of (await readdir(path)).sort()) await walk(join(path, name), `${rel}/${name}`)
    } else {
      lines.push(
        `${head} sha256=${createHash('sha256')
          .update(await readFile(path))
          .digest('hex')}`,
      )
    }
  }
  await walk(dir, '.')
  return lines
}

/** A session of a finished turn plus a run still `running` (a crash recovery must close). */
const givenInterruptedSession = async (w: World): Promise<{ readonly sessionId: string; readonly runId: string }> => {
  const turn = await w.runtime.runTurn({ cwd: w.workspace, prompt: 'hello' })
  if (turn._tag !== 'Finished') throw new Error(JSON.stringify(turn))
  const base = await w.header(turn.sessionId, turn.runId)
  const runId = `run-open-${turn.sessionId.slice(-6)}`
  const identity = { sessionId: base.sessionId, invocationId: `inv-${runId}`, runId, turnId: `turn-${runId}` }
  const { completedAt: _c, failureClass: _f, ...plain } = base
  expect(E.isRight(await w.stores.runs.create({ ...plain, ...identity, status: 'running' } as AgentRun)())).toBe(true)
  const rows: ReadonlyArray<RuntimeEvent> = [makeLedgerBuilderUnsafe(identity).userText('x')]
  for (const row of rows) expect(E.isRight(await w.stores.events.append(base.sessionId, runId, row)())).toBe(true)
  return { sessionId: turn.sessionId, runId }
}

const sessionDirOf = (w: World, sessionId: string) => join(w.dataDir, 'sessions', sessionId)

describe('startup recovery where the data directory refuses it', () => {
  describe.each(['EROFS', 'EACCES', 'EPERM'])('when creating owner.lock fails with %s', (code) => {
    it('reports the session unwritable at the lock with the run it would close, and writes nothing', async () => {
      const w = await world()
      const { sessionId, runId } = await givenInterruptedSession(w)
      const fs = makeFaultInjectingFs(nodeStoreFs)
      // The temp file owner.lock is created through: reading owner.lock still works.
      fs.arm({ call: 'open', path: /\.owner\.lock\.[^/]*\.tmp$/, code })
      const before = await snapshot(w.dataDir)

      const report = await w.runtimeWith({ stores: makeFileStores(w.dataDir, { fs }) }).recover()

      expect(report.unwritable).toEqual([
        {
          sessionId,
          stage: 'lock',
          error: expect.objectContaining({ _tag: 'IoFailed', code, operation: 'open' }) as unknown,
          pending: [{ kind: 'close_run', runId }],
        },
      ])
      expect(report.actions).toEqual([
        expect.objectContaining({ sessionId, action: 'session_skipped', error: expect.objectContaining({ code }) }),
      ])
      expect(await snapshot(w.dataDir)).toEqual(before)
    })
  })

  describe('when creating owner.lock fails with ENOSPC', () => {
    it('reports the failed write as before and no refusal', async () => {
      const w = await world()
      const { sessionId } = await givenInterruptedSession(w)
      const fs = makeFaultInjectingFs(nodeStoreFs)
      fs.arm({ call: 'open', path: /\.owner\.lock\.[^/]*\.tmp$/, code: 'ENOSPC' })

      const report = await w.runtimeWith({ stores: makeFileStores(w.dataDir, { fs }) }).recover()

      expect(report.unwritable).toEqual([])
      expect(report.actions).toEqual([
        expect.objectContaining({
          sessionId,
          action: 'session_skipped',
          error: expect.objectContaining({ code: 'ENOSPC' }),
        }),
      ])
    })
  })

  describe('when owner.lock is a symbolic link', () => {
    it('surveys without locking, reports the run it would close, and writes nothing', async () => {
      const w = await world()
      const { sessionId, runId } = await givenInterruptedSession(w)
      const elsewhere = join(w.root, 'elsewhere.lock')
      await writeFile(elsewhere, '{}')
      await symlink(elsewhere, join(sessionDirOf(w, sessionId), 'owner.lock'))
      const before = await snapshot(w.dataDir)

      const report = await w.runtime.recover()

      expect(report.unwritable).toEqual([
        {
          sessionId,
          stage: 'survey',
          error: expect.objectContaining({
            _tag: 'SymlinkInDataDir',
            relativePath: `sessions/${sessionId}/owner.lock`,
          }),
          pending: [{ kind: 'close_run', runId }],
        },
      ])
      // The report itself is the one it always was for an unreadable owner.lock.
      expect(report.actions).toEqual([
        expect.objectContaining({
          sessionId,
          action: 'session_skipped',
          detail: 'owner.lock is unreadable: SymlinkInDataDir',
        }),
      ])
      expect(await snapshot(w.dataDir)).toEqual(before)
    })
  })

  describe('when claims is a file instead of a folder', () => {
    it('leaves the session whole (no lock, no run closed), says so, and repairs another session', async () => {
      const w = await world()
      const broken = await givenInterruptedSession(w)
      const healthy = await givenInterruptedSession(w)
      await writeFile(join(sessionDirOf(w, broken.sessionId), 'claims'), 'not a folder\n')
      const before = await snapshot(sessionDirOf(w, broken.sessionId))

      const report = await w.runtime.recover()

      expect(report.unwritable).toEqual([
        {
          sessionId: broken.sessionId,
          stage: 'survey',
          error: expect.objectContaining({ _tag: 'IoFailed', code: 'ENOTDIR', operation: 'list' }),
          pending: [{ kind: 'close_run', runId: broken.runId }],
        },
      ])
      expect(report.actions.filter((a) => a.sessionId === broken.sessionId)).toEqual([
        expect.objectContaining({ action: 'left_untouched', detail: 'claims unreadable: IoFailed' }),
        { sessionId: broken.sessionId, action: 'session_skipped', detail: 'not repaired: claims unreadable: IoFailed' },
      ])
      expect(await snapshot(sessionDirOf(w, broken.sessionId))).toEqual(before)
      expect((await w.header(broken.sessionId, broken.runId)).status).toBe('running')
      expect(report.actions).toContainEqual(
        expect.objectContaining({ sessionId: healthy.sessionId, runId: healthy.runId, action: 'recovered_terminal' }),
      )
    })
  })

  describe('when the ledger of a run to close is a symbolic link', () => {
    it('meets the link in the survey, before the lock, and writes nothing', async () => {
      const w = await world()
      const { sessionId, runId } = await givenInterruptedSession(w)
      const ledger = w.ledgerPathOf(sessionId, runId)
      await rename(ledger, join(w.root, 'moved.jsonl'))
      await symlink(join(w.root, 'moved.jsonl'), ledger)
      const before = await snapshot(w.dataDir)

      const report = await w.runtime.recover()

      expect(report.unwritable).toEqual([
        expect.objectContaining({ sessionId, stage: 'survey', pending: [{ kind: 'close_run', runId }] }),
      ])
      expect(report.unwritable[0]?.error._tag).toBe('SymlinkInDataDir')
      expect(await snapshot(w.dataDir)).toEqual(before)
    })
  })

  describe('when the repair write itself is refused (EACCES) after the lock', () => {
    it('reports the session unwritable at the repair', async () => {
      const w = await world()
      const { sessionId, runId } = await givenInterruptedSession(w)
      const fs = makeFaultInjectingFs(nodeStoreFs)
      fs.arm({ call: 'write', path: /runtime-events\.jsonl$/, code: 'EACCES' })

      const report = await w.runtimeWith({ stores: makeFileStores(w.dataDir, { fs }) }).recover()

      expect(report.unwritable).toEqual([
        {
          sessionId,
          stage: 'repair',
          error: expect.objectContaining({ _tag: 'IoFailed', code: 'EACCES' }),
          pending: [{ kind: 'close_run', runId }],
        },
      ])
      expect((await w.header(sessionId, runId)).status).toBe('running')
    })
  })

  describe('when nothing refuses it', () => {
    it('reports no unwritable session', async () => {
      const w = await world()
      const { runId } = await givenInterruptedSession(w)
      const report = await w.runtime.recover()
      expect(report.unwritable).toEqual([])
      expect(report.actions).toContainEqual(expect.objectContaining({ runId, action: 'recovered_terminal' }))
    })
  })
})
