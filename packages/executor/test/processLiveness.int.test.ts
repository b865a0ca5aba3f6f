/**
 * Processes are judged alive by pid + boot id + start ticks, never by the clock. A live background
 * process must never be declared orphaned while it still runs, and only a provably different process
 * (other start ticks, other boot) or a dead pid makes a `running` record an orphan. The owner lock
 * names its process the same way.
 */
import { spawn } from 'node:child_process'
import { hostname } from 'node:os'
import * as E from 'fp-ts/lib/Either.js'
import { afterEach, describe, expect, it } from 'vitest'
import { type OwnerLock, type ShellRun, makeIsoTimestampUnsafe, makeNonNegativeIntUnsafe } from '@maka/events'
import {
  currentProcessIdentity,
  currentProcessStartTime,
  processIdentity,
  processStartTime,
} from '@maka/host-inspector'
import { givenInterruptedRun, trackWorlds, type InterruptedRun, type World } from './support/world.js'

const world = trackWorlds()
const started: Array<number> = []

afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

const SKEW_MS = 5000

/** A real detached process that outlives this test's checks (its group is killed in afterEach). */
const givenLiveProcess = async (): Promise<{ readonly pid: number; readonly startedAt: string }> => {
  const child = spawn('sleep', ['120'], { detached: true, stdio: 'ignore' })
  const pid = await new Promise<number>((resolve, reject) => {
    child.once('error', reject)
    child.once('spawn', () => (child.pid === undefined ? reject(new Error('no pid')) : resolve(child.pid)))
  })
  child.unref()
  started.push(pid)
  const start = await processStartTime(pid)
  if (start === null) throw new Error(`cannot read the start time of ${pid}`)
  return { pid, startedAt: start.toISOString() }
}

const shellRunsOf = async (w: World, sessionId: string): Promise<ReadonlyArray<ShellRun>> => {
  const listed = await w.stores.shellRuns.list(sessionId)()
  if (E.isLeft(listed)) throw new Error(listed.left.message)
  return listed.right.flatMap((entry) => ('shellRun' in entry ? [entry.shellRun] : []))
}

const SETTLE_CEILING_MS = 30_000

const untilShellRun = async (w: World, sessionId: string, done: (run: ShellRun) => boolean): Promise<void> => {
  const deadline = Date.now() + SETTLE_CEILING_MS
  while (Date.now() < deadline) {
    if ((await shellRunsOf(w, sessionId)).some(done)) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no shell run reached the expected state: ${JSON.stringify(await shellRunsOf(w, sessionId))}`)
}

const writeShellRun = async (w: World, source: InterruptedRun, fields: Partial<ShellRun> & Pick<ShellRun, 'pid'>) => {
  const record = {
    shellRunId: 'sh-0000000000c10c4e',
    sessionId: source.sessionId,
    runId: source.runId,
    command: 'sleep 120',
    status: 'running',
    startedAt: new Date().toISOString(),
    ...fields,
  } as ShellRun
  expect(E.isRight(await w.stores.shellRuns.write(record)())).toBe(true)
  return record
}

const shiftedBack = (iso: string): ShellRun['startedAt'] =>
  makeIsoTimestampUnsafe(new Date(Date.parse(iso) - SKEW_MS).toISOString())

describe('background shell-run liveness', () => {
  describe('when a turn started a background command and its recorded startedAt is 5 s off', () => {
    it('records bootId and startTicks; recovery leaves it running and the plan parks on it', async () => {
      const w = await world({ builtins: true })
      const source = await givenInterruptedRun(w, {
        toolCalls: [{ name: 'shell', args: { command: 'sleep 120', background: true } }],
      })
      const [recorded] = await shellRunsOf(w, source.sessionId)
      if (recorded === undefined) throw new Error('the background command was not recorded')
      started.push(recorded.pid)
      const identity = await processIdentity(recorded.pid)
      expect(identity).not.toBeNull()
      expect(recorded).toMatchObject({ status: 'running', bootId: identity?.bootId, startTicks: identity?.startTicks })

      // A wall clock stepped back (or a slow start) leaves startedAt far from the kernel's start time.
      expect(
        E.isRight(await w.stores.shellRuns.write({ ...recorded, startedAt: shiftedBack(recorded.startedAt) })()),
      ).toBe(true)
      const report = await w.runtime.recover()

      expect(report.actions.filter((a) => a.shellRunId !== undefined)).toEqual([])
      expect((await shellRunsOf(w, source.sessionId)).map((r) => r.status)).toEqual(['running'])
      const plan = await w.runtime.plan({ sessionId: source.sessionId })
      expect(plan).toMatchObject({ disposition: 'park', rejectionReasons: ['background_operation_pending'] })
      expect(await w.runtime.resume({ sessionId: source.sessionId })).toMatchObject({ _tag: 'Parked' })
      expect(w.requests.filter((r) => r.kind === 'continuation')).toEqual([])

      // The tool records the end of the command from this process: wait for that record, so nothing
      // writes into the data dir after the test.
      process.kill(-recorded.pid, 'SIGKILL')
      await untilShellRun(w, source.sessionId, (r) => r.status === 'killed')
    })
  })

  describe('when a record without bootId/startTicks names a live pid whose start is 5 s off', () => {
    it('is unsettled: recovery leaves it running and the plan parks with background_operation_pending', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const live = await givenLiveProcess()
      await writeShellRun(w, source, {
        pid: makeNonNegativeIntUnsafe(live.pid),
        startedAt: shiftedBack(live.startedAt),
      })

      const report = await w.runtime.recover()

      expect(report.actions.map((a) => a.action)).not.toContain('shell_run_orphaned')
      expect((await shellRunsOf(w, source.sessionId)).map((r) => r.status)).toEqual(['running'])
      const plan = await w.runtime.plan({ sessionId: source.sessionId })
      expect(plan.rejectionReasons).toEqual(['background_operation_pending'])
    })
  })

  describe.each([
    { what: 'the recorded startTicks differ from the live pid', change: { startTicks: 1 } },
    { what: 'the recorded bootId differs from this boot', change: { bootId: 'an-earlier-boot' } },
  ])('when $what', ({ change }) => {
    it('is a different process: recovery marks the record failed (orphaned) and the plan continues', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const live = await givenLiveProcess()
      const identity = await processIdentity(live.pid)
      if (identity === null) throw new Error('no identity on this host')
      await writeShellRun(w, source, {
        pid: makeNonNegativeIntUnsafe(live.pid),
        startedAt: makeIsoTimestampUnsafe(live.startedAt),
        ...identity,
        ...(change as unknown as Partial<ShellRun>),
      })

      const report = await w.runtime.recover()

      expect(report.actions).toContainEqual(
        expect.objectContaining({ sessionId: source.sessionId, action: 'shell_run_orphaned' }),
      )
      expect((await shellRunsOf(w, source.sessionId)).map((r) => r.status)).toEqual(['failed'])
      const plan = await w.runtime.plan({ sessionId: source.sessionId })
      expect(plan.rejectionReasons).toEqual([])
      expect(plan.disposition).toBe('continue')
    })
  })
})

describe('owner.lock identity', () => {
  describe('when a turn runs', () => {
    it('names the owning process by pid, boot id and start ticks', async () => {
      const w = await world()
      const seen: Array<OwnerLock | null> = []
      const runtime = w.runtimeWith({
        onCrashPoint: async (point) => {
          if (point !== 'after_initial_user_committed') return
          const lock = await w.stores.ownerLocks.read('session-fixed')()
          seen.push(E.isRight(lock) ? lock.right : null)
        },
      })
      w.script([{ text: 'done' }])
      const turn = await runtime.runTurn({ cwd: w.workspace, prompt: 'hi', sessionId: 'session-fixed' })

      expect(turn).toMatchObject({ _tag: 'Finished' })
      const own = await currentProcessIdentity()
      expect(own).not.toBeNull()
      expect(seen).toEqual([expect.objectContaining({ pid: process.pid, hostname: hostname(), ...own })])
    })
  })

  describe('when an existing lock names this pid and start time but other start ticks', () => {
    it('is stale (a reused pid) and is taken over', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w)
      const own = await currentProcessIdentity()
      if (own === null) throw new Error('no identity on this host')
      const reused = {
        pid: process.pid,
        hostname: hostname(),
        startedAt: (await currentProcessStartTime()).toISOString(),
        bootId: own.bootId,
        startTicks: own.startTicks + 1,
      } as OwnerLock
      expect(E.isRight(await w.stores.ownerLocks.acquire(source.sessionId, reused, async () => false)())).toBe(true)

      expect(await w.inspector.ownerLiveness(reused)).toBe('stale')
      const plan = await w.runtime.plan({ sessionId: source.sessionId })
      expect(plan.rejectionReasons).toEqual([])
      expect(await w.runtime.execute(plan)).toMatchObject({ _tag: 'Finished' })
    })
  })
})
