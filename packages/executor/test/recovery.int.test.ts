/**
 * Startup recovery on real files: orphaned shell runs, header/ledger disagreement, corrupt and
 * ambiguous ledgers (reported, never touched), live owners (skipped), and idempotence.
 */
import { spawn } from 'node:child_process'
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { type AgentRun, type RuntimeEvent, isTerminalEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { currentProcessStartTime } from '@maka/host-inspector'
import { hostname } from 'node:os'
import type { ShellRun } from '@maka/events'
import { givenInterruptedRun, trackWorlds, snapshotTree, type World } from './support/world.js'

const world = trackWorlds()

/** A world with one finished normal turn, so a session (and its session.json) exists. */
const givenSession = async () => {
  const w = await world()
  const turn = await w.runtime.runTurn({ cwd: w.workspace, prompt: 'hello' })
  if (turn._tag !== 'Finished') throw new Error(JSON.stringify(turn))
  return { w, sessionId: turn.sessionId, base: await w.header(turn.sessionId, turn.runId) }
}

/** Writes a run directly through the stores: a header with `status`, then `rows` built for it. */
const givenRun = async (
  w: World,
  base: AgentRun,
  runId: string,
  status: AgentRun['status'],
  rows: (b: ReturnType<typeof makeLedgerBuilderUnsafe>) => ReadonlyArray<RuntimeEvent>,
  extra: Record<string, unknown> = {},
) => {
  const identity = { sessionId: base.sessionId, invocationId: `inv-${runId}`, runId, turnId: `turn-${runId}` }
  const { completedAt: _c, failureClass: _f, ...plain } = base
  const header = { ...plain, ...identity, status, ...extra } as AgentRun
  expect(E.isRight(await w.stores.runs.create(header)())).toBe(true)
  for (const row of rows(makeLedgerBuilderUnsafe(identity))) {
    expect(E.isRight(await w.stores.events.append(base.sessionId, runId, row)())).toBe(true)
  }
  return header
}

const deadPid = async (): Promise<number> => {
  const child = spawn('true', [], { stdio: 'ignore' })
  const pid = child.pid
  await new Promise((resolve) => child.on('exit', resolve))
  if (pid === undefined) throw new Error('true did not start')
  return pid
}

describe('recover', () => {
  describe('when a shell run is still marked running but its process is gone', () => {
    it('marks it failed (orphaned)', async () => {
      const { w, sessionId, base } = await givenSession()
      const record = {
        shellRunId: 'sh-00000000deadbeef',
        sessionId,
        runId: base.runId,
        command: 'sleep 1000',
        status: 'running',
        pid: await deadPid(),
        startedAt: new Date().toISOString(),
      } as ShellRun
      expect(E.isRight(await w.stores.shellRuns.write(record)())).toBe(true)

      const report = await w.runtime.recover()

      expect(report.actions).toContainEqual(
        expect.objectContaining({ sessionId, shellRunId: 'sh-00000000deadbeef', action: 'shell_run_orphaned' }),
      )
      const listed = await w.stores.shellRuns.list(sessionId)()
      const entry = E.isRight(listed) ? listed.right[0] : undefined
      expect(entry !== undefined && 'shellRun' in entry && entry.shellRun).toMatchObject({
        status: 'failed',
        pid: record.pid,
      })
      expect(entry !== undefined && 'shellRun' in entry && entry.shellRun.endedAt).toBeTruthy()
    })

    it('leaves a live shell run running', async () => {
      const { w, sessionId, base } = await givenSession()
      const start = await currentProcessStartTime()
      const record = {
        shellRunId: 'sh-00000000000a11fe',
        sessionId,
        runId: base.runId,
        command: 'node',
        status: 'running',
        pid: process.pid,
        startedAt: start.toISOString(),
      } as ShellRun
      expect(E.isRight(await w.stores.shellRuns.write(record)())).toBe(true)

      const report = await w.runtime.recover()

      expect(report.actions.filter((a) => a.shellRunId !== undefined)).toEqual([])
      const listed = await w.stores.shellRuns.list(sessionId)()
      const entry = E.isRight(listed) ? listed.right[0] : undefined
      expect(entry !== undefined && 'shellRun' in entry && entry.shellRun.status).toBe('running')
    })
  })

  describe('when a non-terminal header has a single terminal event', () => {
    it('repairs the header from the ledger and appends nothing', async () => {
      const { w, sessionId, base } = await givenSession()
      await givenRun(w, base, 'run-repair', 'running', (b) => [
        b.userText('x'),
        b.modelText('y'),
        b.terminal({ status: 'completed' }),
      ])
      const ledgerBefore = await readFile(w.ledgerPathOf(sessionId, 'run-repair'))

      const report = await w.runtime.recover()

      expect(report.actions).toContainEqual(expect.objectContaining({ runId: 'run-repair', action: 'header_repaired' }))
      expect(await w.header(sessionId, 'run-repair')).toMatchObject({ status: 'completed' })
      expect(await readFile(w.ledgerPathOf(sessionId, 'run-repair'))).toEqual(ledgerBefore)
    })
  })

  describe('when a non-terminal header has no terminal event', () => {
    it('appends a recovered app_restarted terminal, then writes the failed header', async () => {
      const { w, sessionId, base } = await givenSession()
      await givenRun(w, base, 'run-open', 'running', (b) => [b.userText('x'), b.functionCall('c1', 'count')])

      const report = await w.runtime.recover()

      expect(report.actions).toContainEqual(
        expect.objectContaining({ runId: 'run-open', action: 'recovered_terminal' }),
      )
      const rows = await w.ledger(sessionId, 'run-open')
      expect(rows).toHaveLength(3)
      expect(rows[2]).toMatchObject({
        id: 'run-open-e3',
        status: 'failed',
        actions: { endInvocation: true, stateDelta: { recovered: true, failureClass: 'app_restarted' } },
      })
      expect(await w.header(sessionId, 'run-open')).toMatchObject({ status: 'failed', failureClass: 'app_restarted' })
    })
  })

  describe('when a terminal header has no terminal event', () => {
    it('repairs it as missing_terminal_event', async () => {
      const { w, sessionId, base } = await givenSession()
      await givenRun(w, base, 'run-claims-end', 'completed', (b) => [b.userText('x'), b.modelText('y')], {
        completedAt: '2026-01-01T00:00:00.000Z',
      })

      const report = await w.runtime.recover()

      expect(report.actions).toContainEqual(
        expect.objectContaining({ runId: 'run-claims-end', action: 'missing_terminal_event' }),
      )
      const rows = await w.ledger(sessionId, 'run-claims-end')
      expect(rows.filter(isTerminalEvent)).toHaveLength(1)
      expect(rows[rows.length - 1]).toMatchObject({
        status: 'failed',
        content: { kind: 'error', code: 'missing_terminal_event' },
      })
      expect(await w.header(sessionId, 'run-claims-end')).toMatchObject({
        status: 'failed',
        failureClass: 'missing_terminal_event',
      })
    })
  })

  describe('when a ledger is unreadable or ambiguous', () => {
    it('reports both as left_untouched and changes no byte of them', async () => {
      const { w, sessionId, base } = await givenSession()
      await givenRun(w, base, 'run-garbage', 'running', (b) => [b.userText('x')])
      await appendFile(w.ledgerPathOf(sessionId, 'run-garbage'), '{"this is": not json}\n')
      const tail = makeLedgerBuilderUnsafe({
        sessionId,
        invocationId: 'inv-run-garbage',
        runId: 'run-garbage',
        turnId: 'turn-run-garbage',
      })
      const valid = { ...tail.modelText('after the garbage'), id: 'run-garbage-e3' }
      await appendFile(w.ledgerPathOf(sessionId, 'run-garbage'), `${JSON.stringify(valid)}\n`)
      await givenRun(w, base, 'run-two-ends', 'running', (b) => [
        b.userText('x'),
        b.terminal({ status: 'completed' }),
        b.terminal({ status: 'failed', failureClass: 'runtime_error', message: 'second' }),
      ])
      const bytes = async (runId: string) => [
        await readFile(w.headerPathOf(sessionId, runId)),
        await readFile(w.ledgerPathOf(sessionId, runId)),
      ]
      const garbageBefore = await bytes('run-garbage')
      const twoEndsBefore = await bytes('run-two-ends')

      const report = await w.runtime.recover()

      expect(report.actions).toContainEqual(expect.objectContaining({ runId: 'run-garbage', action: 'left_untouched' }))
      expect(report.actions).toContainEqual(
        expect.objectContaining({ runId: 'run-two-ends', action: 'left_untouched', detail: 'ambiguous_terminal' }),
      )
      expect(await bytes('run-garbage')).toEqual(garbageBefore)
      expect(await bytes('run-two-ends')).toEqual(twoEndsBefore)
    })

    it('leaves a ledger holding another run’s row untouched', async () => {
      const { w, sessionId, base } = await givenSession()
      await givenRun(w, base, 'run-foreign', 'running', (b) => [b.userText('x')])
      const other = makeLedgerBuilderUnsafe({ sessionId, invocationId: 'inv-z', runId: 'run-z', turnId: 'turn-z' })
      await appendFile(w.ledgerPathOf(sessionId, 'run-foreign'), `${JSON.stringify(other.modelText('not mine'))}\n`)
      const before = await readFile(w.ledgerPathOf(sessionId, 'run-foreign'))

      const report = await w.runtime.recover()

      expect(report.actions).toContainEqual(expect.objectContaining({ runId: 'run-foreign', action: 'left_untouched' }))
      expect(await readFile(w.ledgerPathOf(sessionId, 'run-foreign'))).toEqual(before)
      expect((await w.header(sessionId, 'run-foreign')).status).toBe('running')
    })
  })

  describe('when a run header is unreadable', () => {
    it('reports it as left_untouched and changes nothing', async () => {
      const { w, sessionId, base } = await givenSession()
      await givenRun(w, base, 'run-bad-header', 'running', (b) => [b.userText('x')])
      await writeFile(w.headerPathOf(sessionId, 'run-bad-header'), '{"runId": ')
      const before = await snapshotTree(w.runDirOf(sessionId, 'run-bad-header'))

      const report = await w.runtime.recover()

      expect(report.actions).toContainEqual(
        expect.objectContaining({ runId: 'run-bad-header', action: 'left_untouched' }),
      )
      expect(await snapshotTree(w.runDirOf(sessionId, 'run-bad-header'))).toEqual(before)
    })
  })

  describe('when recovery runs a second time', () => {
    it('changes no file', async () => {
      const { w, sessionId, base } = await givenSession()
      await givenRun(w, base, 'run-open', 'running', (b) => [b.userText('x')])
      await givenRun(w, base, 'run-repair', 'created', (b) => [b.userText('x'), b.terminal()])
      await givenRun(w, base, 'run-claims-end', 'failed', (b) => [b.userText('x')])
      await givenRun(w, base, 'run-two-ends', 'running', (b) => [b.userText('x'), b.terminal(), b.terminal()])
      const orphan = {
        shellRunId: 'sh-000000000000dead',
        sessionId,
        runId: base.runId,
        command: 'x',
        status: 'running',
        pid: await deadPid(),
        startedAt: new Date().toISOString(),
      } as ShellRun
      expect(E.isRight(await w.stores.shellRuns.write(orphan)())).toBe(true)
      const first = await w.runtime.recover()
      expect(first.actions.map((a) => a.action).sort()).toEqual(
        [
          'header_repaired',
          'left_untouched',
          'missing_terminal_event',
          'recovered_terminal',
          'shell_run_orphaned',
        ].sort(),
      )
      const before = await snapshotTree(w.dataDir)

      const second = await w.runtime.recover()

      expect(second.actions).toEqual([
        { sessionId, runId: 'run-two-ends', action: 'left_untouched', detail: 'ambiguous_terminal' },
      ])
      expect(await snapshotTree(w.dataDir)).toEqual(before)
    })
  })

  describe('when a live process owns the session', () => {
    it('skips the session and writes nothing', async () => {
      const { w, sessionId, base } = await givenSession()
      await givenRun(w, base, 'run-open', 'running', (b) => [b.userText('x')])
      const lock = {
        pid: process.pid,
        hostname: hostname(),
        startedAt: (await currentProcessStartTime()).toISOString(),
      } as Parameters<World['stores']['ownerLocks']['release']>[1]
      expect(E.isRight(await w.stores.ownerLocks.acquire(sessionId, lock, () => Promise.resolve(false))())).toBe(true)
      const before = await snapshotTree(w.dataDir)

      const report = await w.runtime.recover()

      expect(report.actions).toEqual([{ sessionId, action: 'session_skipped', detail: expect.any(String) as string }])
      expect(await snapshotTree(w.dataDir)).toEqual(before)
      expect((await w.header(sessionId, 'run-open')).status).toBe('running')
      // Once the owner is gone, the same pass repairs the run.
      expect(E.isRight(await w.stores.ownerLocks.release(sessionId, lock)())).toBe(true)
      const later = await w.runtime.recover()
      expect(later.actions).toContainEqual(expect.objectContaining({ runId: 'run-open', action: 'recovered_terminal' }))
    })

    it('takes over a stale lock of a dead process', async () => {
      const { w, sessionId, base } = await givenSession()
      await givenRun(w, base, 'run-open', 'running', (b) => [b.userText('x')])
      const stale = {
        pid: await deadPid(),
        hostname: hostname(),
        startedAt: '2020-01-01T00:00:00.000Z',
      } as Parameters<World['stores']['ownerLocks']['release']>[1]
      expect(E.isRight(await w.stores.ownerLocks.acquire(sessionId, stale, () => Promise.resolve(false))())).toBe(true)

      const report = await w.runtime.recover()

      expect(report.actions).toContainEqual(
        expect.objectContaining({ runId: 'run-open', action: 'recovered_terminal' }),
      )
      const lockAfter = await w.stores.ownerLocks.read(sessionId)()
      expect(E.isRight(lockAfter) && lockAfter.right).toBeNull()
    })
  })
})

describe('recover, when nothing needs repair', () => {
  it('takes no owner lock and reads no ledger whole, and still repairs a terminal header whose ledger disagrees', async () => {
    const { w, sessionId, base } = await givenSession()
    await givenRun(w, base, 'run-done', 'completed', (b) => [b.userText('x'), b.terminal({ status: 'completed' })], {
      completedAt: '2026-01-01T00:00:00.000Z',
    })
    const calls: Array<string> = []
    const counting = (s: World['stores']): World['stores'] => ({
      ...s,
      events: {
        ...s.events,
        read: (sid, rid) => {
          calls.push(`read ${rid}`)
          return s.events.read(sid, rid)
        },
      },
      ownerLocks: {
        ...s.ownerLocks,
        acquire: (sid, lock, isStale) => {
          calls.push(`lock ${sid}`)
          return s.ownerLocks.acquire(sid, lock, isStale)
        },
      },
    })
    const before = await snapshotTree(w.dataDir)

    const quiet = await w.runtimeWith({ wrapStores: counting }).recover()

    expect(quiet.actions).toEqual([])
    expect(calls).toEqual([])
    expect(await snapshotTree(w.dataDir)).toEqual(before)

    // A terminal header whose last row is another run status is found from the tail and repaired.
    await givenRun(w, base, 'run-disagrees', 'completed', (b) => [b.userText('x'), b.terminal()], {
      completedAt: '2026-01-01T00:00:00.000Z',
    })
    const repaired = await w.runtimeWith({ wrapStores: counting }).recover()
    expect(repaired.actions).toEqual([
      expect.objectContaining({ sessionId, runId: 'run-disagrees', action: 'header_repaired' }),
    ])
    expect(await w.header(sessionId, 'run-disagrees')).toMatchObject({
      status: 'failed',
      failureClass: 'app_restarted',
    })
    expect(calls).toEqual([`lock ${sessionId}`, 'read run-disagrees'])
  })
})

describe('recover, over several sessions', () => {
  it('surveys independent sessions at the same time, and reports them in session order', async () => {
    const w = await world()
    const first = await w.runtime.runTurn({ sessionId: 'session-a', cwd: w.workspace, prompt: 'a' })
    const second = await w.runtime.runTurn({ sessionId: 'session-b', cwd: w.workspace, prompt: 'b' })
    expect([first._tag, second._tag]).toEqual(['Finished', 'Finished'])
    const base = await w.header('session-a', (first as { runId: string }).runId)
    await givenRun(w, base, 'run-open-a', 'running', (b) => [b.userText('x')])
    const listed: Array<string> = []
    let releaseA: () => void = () => undefined
    const bListed = new Promise<'b started'>((resolve) => {
      releaseA = () => resolve('b started')
    })
    let aWaited: string | null = null
    // Session a's survey waits until session b's has started (20 s at most): a serial pass cannot get there.
    const gated = (s: World['stores']): World['stores'] => ({
      ...s,
      shellRuns: {
        ...s.shellRuns,
        list: (sessionId) => async () => {
          listed.push(sessionId)
          if (sessionId === 'session-b') releaseA()
          if (sessionId === 'session-a' && aWaited === null) {
            aWaited = 'waiting'
            aWaited = await Promise.race([
              bListed,
              new Promise<string>((resolve) => setTimeout(() => resolve('timed out'), 20_000)),
            ])
          }
          return s.shellRuns.list(sessionId)()
        },
      },
    })

    const report = await w.runtimeWith({ wrapStores: gated }).recover()

    expect(aWaited).toBe('b started')
    expect(report.actions).toEqual([
      expect.objectContaining({ sessionId: 'session-a', runId: 'run-open-a', action: 'recovered_terminal' }),
    ])
  }, 60_000)
})

describe('a run folder without run.json (a create that never completed)', () => {
  describe('when recovery and planning meet it', () => {
    it('reports and keeps it, and it neither blocks the host facts nor becomes the candidate', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      await mkdir(join(w.dataDir, 'sessions', source.sessionId, 'runs', 'run-never-created'), { recursive: true })

      const first = await w.runtime.recover()
      const before = await snapshotTree(w.dataDir)
      const second = await w.runtime.recover()
      const plan = await w.runtime.plan({ sessionId: source.sessionId })

      const orphan = (report: typeof first) => report.actions.filter((a) => a.runId === 'run-never-created')
      expect(orphan(first)).toEqual([expect.objectContaining({ action: 'left_untouched' })])
      expect(orphan(first)[0]?.detail).toMatch(/never created/)
      expect(orphan(second)).toEqual(orphan(first))
      expect(await snapshotTree(w.dataDir)).toEqual(before)
      expect(plan).toMatchObject({ disposition: 'continue', sourceRunId: source.runId })
    })
  })
})
