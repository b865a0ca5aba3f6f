import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { findReattachRecord, observeReattach, observeReattachOperation } from './observeReattach.js'
import { processIdentity } from './processFacts.js'
import { makeDataDirFixtureUnsafe, type DataDirFixture } from './test-support/fileSessionState.js'
import { makeProcessFixtureUnsafe, type Spawned } from './test-support/processes.js'
import { SESSION_ID, shellRunUnsafe } from './test-support/records.js'
import type { SessionStatePort } from './SessionStatePort.js'

const processes = makeProcessFixtureUnsafe()
const OPERATION = 'run-1-o3'
let data: DataDirFixture
let dirs: string

beforeEach(async () => {
  data = await makeDataDirFixtureUnsafe()
  dirs = await realpath(await mkdtemp(path.join(tmpdir(), 'maka-host-inspector-runs-')))
})

afterEach(async () => {
  await processes.stopAll()
  await data.cleanup()
  await rm(dirs, { recursive: true, force: true })
})

const dirOf = (shellRunId: string) => path.join(dirs, shellRunId)

// A supervised run's record: a live process stands in for its supervisor, named exactly.
const supervisedBy = async (process: Spawned, shellRunId = 'sh-1') => {
  const identity = await processIdentity(process.pid)
  await mkdir(dirOf(shellRunId), { recursive: true })
  return shellRunUnsafe({
    shellRunId,
    status: 'running',
    pid: process.pid,
    startedAt: process.startedAt,
    operationId: OPERATION,
    ...(identity === null ? {} : { bootId: identity.bootId, startTicks: identity.startTicks }),
  })
}

const writeExit = (shellRunId: string) =>
  writeFile(
    path.join(dirOf(shellRunId), 'exit'),
    JSON.stringify({ exitCode: 0, signal: null, stdoutBytes: 0, stderrBytes: 0 }),
  )

describe('observeReattach', () => {
  describe('when the supervisor is alive and no exit file exists', () => {
    it('is running', async () => {
      const record = await supervisedBy(await processes.sleeper())
      expect(await observeReattach(record, dirOf('sh-1'))).toBe('running')
    })
  })

  describe('when the exit file exists', () => {
    it('is exited, whether or not the supervisor has ended yet', async () => {
      const record = await supervisedBy(await processes.sleeper())
      await writeExit('sh-1')
      expect(await observeReattach(record, dirOf('sh-1'))).toBe('exited')
      const gone = { ...record, pid: await processes.deadPid() }
      expect(await observeReattach(gone, dirOf('sh-1'))).toBe('exited')
    })
  })

  describe('when the supervisor is gone and wrote no exit file', () => {
    it('is lost', async () => {
      const record = shellRunUnsafe({
        shellRunId: 'sh-1',
        status: 'running',
        pid: await processes.deadPid(),
        startedAt: new Date().toISOString(),
        operationId: OPERATION,
      })
      await mkdir(dirOf('sh-1'))
      expect(await observeReattach(record, dirOf('sh-1'))).toBe('lost')
    })

    it('is lost when the pid now names another process (other start ticks)', async () => {
      const record = await supervisedBy(await processes.sleeper())
      if (record.startTicks === undefined) throw new Error('this host gives no start ticks')
      const reused = { ...record, startTicks: record.startTicks + 1 }
      expect(await observeReattach(reused, dirOf('sh-1'))).toBe('lost')
    })

    it('is lost when its folder is missing, or holds a link where exit belongs', async () => {
      const record = { ...(await supervisedBy(await processes.sleeper())), pid: await processes.deadPid() }
      expect(await observeReattach(record, dirOf('sh-none'))).toBe('lost')
      await writeFile(path.join(dirs, 'elsewhere'), '{}')
      await symlink(path.join(dirs, 'elsewhere'), path.join(dirOf('sh-1'), 'exit'))
      expect(await observeReattach(record, dirOf('sh-1'))).toBe('lost')
    })
  })
})

describe('findReattachRecord', () => {
  it('finds the record naming the operation, or null', () => {
    const mine = shellRunUnsafe({
      shellRunId: 'sh-1',
      status: 'running',
      pid: 1,
      startedAt: 'x',
      operationId: OPERATION,
    })
    const other = shellRunUnsafe({
      shellRunId: 'sh-2',
      status: 'running',
      pid: 1,
      startedAt: 'x',
      operationId: 'run-1-o5',
    })
    const background = shellRunUnsafe({ shellRunId: 'sh-3', status: 'running', pid: 1, startedAt: 'x' })
    expect(findReattachRecord([background, other, mine], SESSION_ID, OPERATION)).toEqual(E.right(mine))
    expect(findReattachRecord([background, other], SESSION_ID, OPERATION)).toEqual(E.right(null))
    expect(findReattachRecord([], SESSION_ID, OPERATION)).toEqual(E.right(null))
  })

  it('fails on an unreadable entry (it may be the record) and on two records of one operation', () => {
    const mine = shellRunUnsafe({
      shellRunId: 'sh-1',
      status: 'running',
      pid: 1,
      startedAt: 'x',
      operationId: OPERATION,
    })
    const broken = findReattachRecord([mine, { shellRunId: 'sh-9', error: 'bad json' }], SESSION_ID, OPERATION)
    expect(broken).toMatchObject({ _tag: 'Left', left: { _tag: 'ShellRunsUnreadable', shellRunId: 'sh-9' } })
    const copy = shellRunUnsafe({
      shellRunId: 'sh-2',
      status: 'running',
      pid: 1,
      startedAt: 'x',
      operationId: OPERATION,
    })
    const twice = findReattachRecord([mine, copy], SESSION_ID, OPERATION)
    expect(twice).toMatchObject({ _tag: 'Left', left: { _tag: 'ShellRunsUnreadable' } })
  })
})

describe('observeReattachOperation', () => {
  it('is lost when no record names the operation', async () => {
    const observed = await observeReattachOperation(data.port, SESSION_ID, OPERATION, dirOf)()
    expect(observed).toEqual(E.right('lost'))
  })

  it('observes the recorded run in its folder', async () => {
    const record = await supervisedBy(await processes.sleeper(), 'sh-7')
    await data.writeShellRun(record)
    expect(await observeReattachOperation(data.port, SESSION_ID, OPERATION, dirOf)()).toEqual(E.right('running'))
    await writeExit('sh-7')
    expect(await observeReattachOperation(data.port, SESSION_ID, OPERATION, dirOf)()).toEqual(E.right('exited'))
  })

  it('fails when the listing cannot be read (a port Left, a rejection, a malformed listing)', async () => {
    const ports: ReadonlyArray<SessionStatePort> = [
      { ...data.port, listShellRuns: () => TE.left({ _tag: 'NotFound', path: 'x' } as never) },
      { ...data.port, listShellRuns: () => () => Promise.reject(new Error('boom')) },
      { ...data.port, listShellRuns: () => TE.right([null] as never) },
    ]
    for (const port of ports) {
      const observed = await observeReattachOperation(port, SESSION_ID, OPERATION, dirOf)()
      expect(observed).toMatchObject({ _tag: 'Left', left: { _tag: 'ShellRunsUnreadable' } })
    }
  })
})
