import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { type AgentRun, type ProcessIdentity, makeNonEmptyStringUnsafe, makeNonNegativeIntUnsafe } from '@maka/events'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeDataDirFixtureUnsafe, type DataDirFixture } from './test-support/fileSessionState.js'
import { givenSessionUnsafe } from './test-support/inspectorScenario.js'
import { processIdentity } from './processFacts.js'
import { makeProcessFixtureUnsafe } from './test-support/processes.js'
import { runHeaderUnsafe, SESSION_ID, shellRunUnsafe } from './test-support/records.js'
import { unsettledOperationsOf } from './unsettledOperations.js'

const processes = makeProcessFixtureUnsafe()
const HOUR_MS = 60 * 60 * 1000
let data: DataDirFixture
let cwd: string

beforeEach(async () => {
  data = await makeDataDirFixtureUnsafe()
  cwd = await realpath(await mkdtemp(path.join(tmpdir(), 'maka-host-inspector-ws-')))
})

afterEach(async () => {
  await processes.stopAll()
  await data.cleanup()
  await rm(cwd, { recursive: true, force: true })
})

describe('unsettledOperations', () => {
  describe('when the session has no shell runs and no runs', () => {
    it('is settled', async () => {
      const session = await givenSessionUnsafe(data, cwd)
      ;(await session.whenInspecting()).thenSettled()
    })
  })

  describe('when a running shell run names a process that has exited', () => {
    it('is settled (an orphan recovery will mark failed)', async () => {
      const pid = await processes.deadPid()
      const session = await givenSessionUnsafe(data, cwd, {
        shellRuns: [
          shellRunUnsafe({ shellRunId: 'sh-dead', status: 'running', pid, startedAt: new Date().toISOString() }),
        ],
      })
      ;(await session.whenInspecting()).thenSettled()
    })
  })

  describe('when a running shell run names a live process with its recorded start time', () => {
    it('is unsettled', async () => {
      const child = await processes.sleeper()
      const session = await givenSessionUnsafe(data, cwd, {
        shellRuns: [shellRunUnsafe({ shellRunId: 'sh-live', status: 'running', ...child })],
      })
      ;(await session.whenInspecting()).thenUnsettled([{ kind: 'shell_run', id: 'sh-live' }])
    })
  })

  describe('when a running shell run without bootId/startTicks names a live pid with a start time an hour off', () => {
    it('is unsettled: the clock never declares a live process dead', async () => {
      const child = await processes.sleeper()
      const startedAt = new Date(Date.parse(child.startedAt) - HOUR_MS).toISOString()
      const session = await givenSessionUnsafe(data, cwd, {
        shellRuns: [shellRunUnsafe({ shellRunId: 'sh-old', status: 'running', pid: child.pid, startedAt })],
      })
      ;(await session.whenInspecting()).thenUnsettled([{ kind: 'shell_run', id: 'sh-old' }])
    })
  })

  describe.skipIf(process.platform !== 'linux')('when a running shell run records bootId and startTicks', () => {
    const givenRecorded = async (change: (identity: ProcessIdentity) => Partial<ProcessIdentity>) => {
      const child = await processes.sleeper()
      const identity = await processIdentity(child.pid)
      if (identity === null) throw new Error(`cannot read the identity of ${child.pid}`)
      // An hour off: only the exact identity may decide.
      const startedAt = new Date(Date.parse(child.startedAt) - HOUR_MS).toISOString()
      return givenSessionUnsafe(data, cwd, {
        shellRuns: [
          shellRunUnsafe({
            shellRunId: 'sh-exact',
            status: 'running',
            pid: child.pid,
            startedAt,
            ...identity,
            ...change(identity),
          }),
        ],
      })
    }

    it('is unsettled when they match the live pid, whatever its startedAt says', async () => {
      ;(await (await givenRecorded(() => ({}))).whenInspecting()).thenUnsettled([{ kind: 'shell_run', id: 'sh-exact' }])
    })

    it('is settled when the startTicks differ (the pid was reused by another process)', async () => {
      const session = await givenRecorded((identity) => ({
        startTicks: makeNonNegativeIntUnsafe(identity.startTicks + 1),
      }))
      ;(await session.whenInspecting()).thenSettled()
    })

    it('is settled when the bootId differs (the process belonged to an earlier boot)', async () => {
      const session = await givenRecorded(() => ({ bootId: makeNonEmptyStringUnsafe('another-boot') }))
      ;(await session.whenInspecting()).thenSettled()
    })
  })

  describe('when a shell run has ended but its pid is still live', () => {
    it.each(['completed', 'failed', 'killed'] as const)('is settled for status %s', async (status) => {
      const child = await processes.sleeper()
      const session = await givenSessionUnsafe(data, cwd, {
        shellRuns: [shellRunUnsafe({ shellRunId: 'sh-ended', status, ...child })],
      })
      ;(await session.whenInspecting()).thenSettled()
    })
  })

  describe('when the session has child and continuation runs', () => {
    const cases: ReadonlyArray<{
      kind: 'child' | 'continuation' | 'top_level'
      status: AgentRun['status']
      unsettled: boolean
    }> = [
      { kind: 'child', status: 'created', unsettled: true },
      { kind: 'child', status: 'running', unsettled: true },
      { kind: 'child', status: 'waiting_permission', unsettled: true },
      { kind: 'child', status: 'completed', unsettled: false },
      { kind: 'child', status: 'failed', unsettled: false },
      { kind: 'child', status: 'cancelled', unsettled: false },
      { kind: 'continuation', status: 'created', unsettled: true },
      { kind: 'continuation', status: 'running', unsettled: true },
      { kind: 'continuation', status: 'waiting_permission', unsettled: true },
      { kind: 'continuation', status: 'completed', unsettled: false },
      { kind: 'continuation', status: 'failed', unsettled: false },
      { kind: 'continuation', status: 'cancelled', unsettled: false },
      // A top-level run is the planner's candidate, not a background operation.
      { kind: 'top_level', status: 'running', unsettled: false },
      { kind: 'top_level', status: 'completed', unsettled: false },
    ]

    it.each(cases)('a $kind run that is $status is unsettled: $unsettled', async ({ kind, status, unsettled }) => {
      const session = await givenSessionUnsafe(data, cwd, { runs: [runHeaderUnsafe({ runId: 'run-x', kind, status })] })
      const outcome = await session.whenInspecting()
      if (unsettled) {
        outcome.thenUnsettled([{ kind: kind === 'child' ? 'child_run' : 'continuation_run', id: 'run-x' }])
      } else {
        outcome.thenSettled()
      }
    })
  })

  describe('when the caller excludes the source run', () => {
    it('leaves that run out but still reports the others', async () => {
      const session = await givenSessionUnsafe(data, cwd, {
        runs: [
          runHeaderUnsafe({ runId: 'run-source', kind: 'continuation', status: 'running' }),
          runHeaderUnsafe({ runId: 'run-child', kind: 'child', status: 'running' }),
        ],
      })
      ;(await session.whenInspecting({ excludeRunIds: ['run-source'] })).thenUnsettled([
        { kind: 'child_run', id: 'run-child' },
      ])
      ;(await session.whenInspecting({ excludeRunIds: ['run-source', 'run-child'] })).thenSettled()
    })

    it('does not fail on the excluded run being unreadable', async () => {
      await data.writeRawRunHeader(SESSION_ID, 'run-source', '{"not":"a header"}')
      const session = await givenSessionUnsafe(data, cwd)
      ;(await session.whenInspecting({ excludeRunIds: ['run-source'] })).thenSettled()
      ;(await session.whenInspecting()).thenFails('RunsUnreadable')
    })

    it('still reports a live shell run started by the excluded run', async () => {
      const child = await processes.sleeper()
      const session = await givenSessionUnsafe(data, cwd, {
        shellRuns: [shellRunUnsafe({ shellRunId: 'sh-1', status: 'running', runId: 'run-source', ...child })],
      })
      ;(await session.whenInspecting({ excludeRunIds: ['run-source'] })).thenUnsettled([
        { kind: 'shell_run', id: 'sh-1' },
      ])
    })
  })

  describe('when a live shell run is a supervised foreground run (it names an operation)', () => {
    const givenSupervised = async () => {
      const child = await processes.sleeper()
      return givenSessionUnsafe(data, cwd, {
        shellRuns: [
          shellRunUnsafe({ shellRunId: 'sh-fg', status: 'running', ...child, operationId: 'run-1-o3' }),
          shellRunUnsafe({ shellRunId: 'sh-bg', status: 'running', ...child }),
        ],
      })
    }

    it('is unsettled by default, the safe side, naming its operation for the planner', async () => {
      ;(await (await givenSupervised()).whenInspecting()).thenUnsettled([
        { kind: 'shell_run', id: 'sh-bg' },
        { kind: 'shell_run', id: 'sh-fg', operationId: 'run-1-o3' },
      ])
    })

    it('is left out while the caller says its operation is open; a background run never is', async () => {
      const session = await givenSupervised()
      ;(await session.whenInspecting({ openOperationIds: ['run-1-o3'] })).thenUnsettled([
        { kind: 'shell_run', id: 'sh-bg' },
      ])
      ;(await session.whenInspecting({ openOperationIds: ['run-1-o4'] })).thenUnsettled([
        { kind: 'shell_run', id: 'sh-bg' },
        { kind: 'shell_run', id: 'sh-fg', operationId: 'run-1-o3' },
      ])
    })
  })

  describe('when several operations are unsettled', () => {
    it('lists shell runs, then child runs, then continuations, each by id', async () => {
      const child = await processes.sleeper()
      const session = await givenSessionUnsafe(data, cwd, {
        shellRuns: [
          shellRunUnsafe({ shellRunId: 'sh-b', status: 'running', ...child }),
          shellRunUnsafe({ shellRunId: 'sh-a', status: 'running', ...child }),
        ],
        runs: [
          runHeaderUnsafe({ runId: 'run-z', kind: 'continuation', status: 'created' }),
          runHeaderUnsafe({ runId: 'run-y', kind: 'child', status: 'running' }),
          runHeaderUnsafe({ runId: 'run-c', kind: 'child', status: 'waiting_permission' }),
        ],
      })
      ;(await session.whenInspecting()).thenUnsettled([
        { kind: 'shell_run', id: 'sh-a' },
        { kind: 'shell_run', id: 'sh-b' },
        { kind: 'child_run', id: 'run-c' },
        { kind: 'child_run', id: 'run-y' },
        { kind: 'continuation_run', id: 'run-z' },
      ])
    })
  })

  describe('when a shell-run file is unreadable', () => {
    it('fails with ShellRunsUnreadable naming it (fail closed)', async () => {
      await data.writeRawShellRun(SESSION_ID, 'sh-torn', '{"shellRunId":"sh-torn","sta')
      const session = await givenSessionUnsafe(data, cwd)
      const error = (await session.whenInspecting()).thenFails('ShellRunsUnreadable')
      expect(error).toMatchObject({ sessionId: SESSION_ID, shellRunId: 'sh-torn' })
    })
  })

  describe('when a run header does not decode', () => {
    it('fails with RunsUnreadable naming it (fail closed)', async () => {
      await data.writeRawRunHeader(SESSION_ID, 'run-bad', JSON.stringify({ runId: 'run-bad', status: 'running' }))
      const session = await givenSessionUnsafe(data, cwd)
      const error = (await session.whenInspecting()).thenFails('RunsUnreadable')
      expect(error).toMatchObject({ sessionId: SESSION_ID, runId: 'run-bad' })
    })
  })

  describe('when called directly with the port', () => {
    it('returns the same operations the inspector reports', async () => {
      await data.writeRunHeader(runHeaderUnsafe({ runId: 'run-y', kind: 'child', status: 'running' }))
      expect(await unsettledOperationsOf(data.port, SESSION_ID)()).toEqual({
        _tag: 'Right',
        right: [{ kind: 'child_run', id: 'run-y' }],
      })
    })
  })
})
