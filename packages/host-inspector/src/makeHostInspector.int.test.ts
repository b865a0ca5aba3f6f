import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { OwnerLock } from '@maka/events'
import { type StoreError, unreadable } from '@maka/stores'
import type { WorkspaceCheckpoint } from '@maka/planner'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { workspaceIdentityOf } from './canonicalCwd.js'
import { checkpointUnavailable } from './InspectError.js'
import { makeHostInspector } from './makeHostInspector.js'
import type { CheckpointProvider, CheckpointQuery, SessionStatePort } from './SessionStatePort.js'
import { makeDataDirFixtureUnsafe, type DataDirFixture } from './test-support/fileSessionState.js'
import { givenSessionUnsafe } from './test-support/inspectorScenario.js'
import { makeProcessFixtureUnsafe } from './test-support/processes.js'
import { SESSION_ID } from './test-support/records.js'

const processes = makeProcessFixtureUnsafe()
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

const providerOf = (
  answer: () => TE.TaskEither<ReturnType<typeof checkpointUnavailable>, WorkspaceCheckpoint | null>,
  seen: Array<CheckpointQuery> = [],
): CheckpointProvider => ({
  checkpointFor: (query) => {
    seen.push(query)
    return answer()
  },
})

describe('makeHostInspector', () => {
  describe('when everything is observable', () => {
    it('returns canonical cwd, identity, settled operations and sorted unique tool names', async () => {
      const link = path.join(cwd, 'link')
      await mkdir(path.join(cwd, 'real'))
      await symlink(path.join(cwd, 'real'), link)
      const session = await givenSessionUnsafe(data, `${link}/`)
      const { facts } = await session.whenInspecting(
        {},
        { toolNames: () => ['write_file', 'bash', 'read_file', 'bash', 'Zed', 'apply_patch'] },
      )
      const identity = await workspaceIdentityOf(path.join(cwd, 'real'))()

      expect(facts).toEqual({
        currentCwd: path.join(cwd, 'real'),
        currentWorkspaceIdentity: identity._tag === 'Right' ? identity.right : 'unreachable',
        backgroundOperationsSettled: true,
        unsettledOperations: [],
        availableToolNames: ['Zed', 'apply_patch', 'bash', 'read_file', 'write_file'],
      })
    })

    it('copies expectedRuntimeEventHighWater into the facts', async () => {
      const session = await givenSessionUnsafe(data, cwd)
      expect((await session.whenInspecting({ expectedRuntimeEventHighWater: 7 })).facts).toMatchObject({
        expectedRuntimeEventHighWater: 7,
      })
      expect((await session.whenInspecting()).facts).not.toHaveProperty('expectedRuntimeEventHighWater')
    })

    it('reads the tool catalog again on every call', async () => {
      let names: ReadonlyArray<string> = ['a']
      const session = await givenSessionUnsafe(data, cwd)
      const deps = { toolNames: () => names }
      expect((await session.whenInspecting({}, deps)).facts.availableToolNames).toEqual(['a'])
      names = ['b', 'a']
      expect((await session.whenInspecting({}, deps)).facts.availableToolNames).toEqual(['a', 'b'])
    })
  })

  describe('when no checkpoint provider is configured', () => {
    it('has no workspaceCheckpoint', async () => {
      const session = await givenSessionUnsafe(data, cwd)
      expect((await session.whenInspecting()).facts).not.toHaveProperty('workspaceCheckpoint')
    })
  })

  describe('when a checkpoint provider returns a checkpoint', () => {
    it('passes it through and asks for the source run', async () => {
      const seen: Array<CheckpointQuery> = []
      const checkpoint: WorkspaceCheckpoint = { ref: 'git:abc123', restored: true, runtimeEventHighWater: 5 }
      const session = await givenSessionUnsafe(data, cwd)
      const outcome = await session.whenInspecting(
        { sourceRunId: 'run-1' },
        { checkpointProvider: providerOf(() => TE.right(checkpoint), seen) },
      )

      expect(outcome.facts.workspaceCheckpoint).toEqual(checkpoint)
      expect(seen).toEqual([{ sessionId: SESSION_ID, runId: 'run-1' }])
    })

    it('keeps a checkpoint without a ref as it is (the planner parks on it)', async () => {
      const session = await givenSessionUnsafe(data, cwd)
      const outcome = await session.whenInspecting(
        {},
        { checkpointProvider: providerOf(() => TE.right({ restored: false, runtimeEventHighWater: 0 })) },
      )
      expect(outcome.facts.workspaceCheckpoint).toEqual({ restored: false, runtimeEventHighWater: 0 })
    })
  })

  describe('when a checkpoint provider has none', () => {
    it('has no workspaceCheckpoint', async () => {
      const session = await givenSessionUnsafe(data, cwd)
      const outcome = await session.whenInspecting({}, { checkpointProvider: providerOf(() => TE.right(null)) })
      expect(outcome.facts).not.toHaveProperty('workspaceCheckpoint')
    })
  })

  describe('when a checkpoint provider fails', () => {
    it('fails with its typed error', async () => {
      const session = await givenSessionUnsafe(data, cwd)
      const outcome = await session.whenInspecting(
        {},
        { checkpointProvider: providerOf(() => TE.left(checkpointUnavailable(SESSION_ID, 'git is not installed'))) },
      )
      expect(outcome.thenFails('CheckpointUnavailable').message).toContain('git is not installed')
    })

    it('fails with CheckpointUnavailable when the provider throws or rejects', async () => {
      const session = await givenSessionUnsafe(data, cwd)
      const throwing: CheckpointProvider = {
        checkpointFor: () => {
          throw new Error('boom')
        },
      }
      const rejecting: CheckpointProvider = { checkpointFor: () => () => Promise.reject(new Error('late boom')) }
      ;(await session.whenInspecting({}, { checkpointProvider: throwing })).thenFails('CheckpointUnavailable')
      ;(await session.whenInspecting({}, { checkpointProvider: rejecting })).thenFails('CheckpointUnavailable')
    })

    it('fails with CheckpointUnavailable on a malformed checkpoint', async () => {
      const session = await givenSessionUnsafe(data, cwd)
      const malformed = { restored: 'yes', runtimeEventHighWater: -1 } as unknown as WorkspaceCheckpoint
      ;(await session.whenInspecting({}, { checkpointProvider: providerOf(() => TE.right(malformed)) })).thenFails(
        'CheckpointUnavailable',
      )
    })
  })

  describe('when the port cannot list the session', () => {
    const failing = (which: 'shell' | 'runs', how: 'left' | 'throw' | 'reject'): SessionStatePort => {
      const fail = <A>(): TE.TaskEither<StoreError, A> => {
        if (how === 'throw') throw new Error('EIO')
        return how === 'left' ? TE.left(unreadable('shell-runs', 'EIO')) : () => Promise.reject(new Error('EIO'))
      }
      return {
        listShellRuns: (sessionId) => (which === 'shell' ? fail() : data.port.listShellRuns(sessionId)),
        listRuns: (sessionId) => (which === 'runs' ? fail() : data.port.listRuns(sessionId)),
      }
    }

    it.each(['left', 'throw', 'reject'] as const)(
      'fails with ShellRunsUnreadable when listing shell runs %s',
      async (how) => {
        const session = await givenSessionUnsafe(data, cwd)
        const error = (await session.whenInspecting({}, { port: failing('shell', how) })).thenFails(
          'ShellRunsUnreadable',
        )
        expect(error.message).toContain('EIO')
      },
    )

    it('fails closed when the port returns a malformed listing', async () => {
      const session = await givenSessionUnsafe(data, cwd)
      const port = {
        listShellRuns: () => TE.right([null]),
        listRuns: () => TE.right('not a list'),
      } as unknown as SessionStatePort
      ;(await session.whenInspecting({}, { port })).thenFails('ShellRunsUnreadable')
      const runsOnly = { ...port, listShellRuns: () => TE.right([]) } as unknown as SessionStatePort
      ;(await session.whenInspecting({}, { port: runsOnly })).thenFails('RunsUnreadable')
    })

    it.each(['left', 'throw', 'reject'] as const)('fails with RunsUnreadable when listing runs %s', async (how) => {
      const session = await givenSessionUnsafe(data, cwd)
      ;(await session.whenInspecting({}, { port: failing('runs', how) })).thenFails('RunsUnreadable')
    })
  })

  describe('when the session cwd is gone or not a directory', () => {
    it('fails with CwdUnavailable for a missing cwd', async () => {
      const session = await givenSessionUnsafe(data, path.join(cwd, 'missing'))
      expect((await session.whenInspecting()).thenFails('CwdUnavailable')).toMatchObject({ code: 'ENOENT' })
    })

    it('fails with NotADirectory for a file', async () => {
      const file = path.join(cwd, 'file.txt')
      await writeFile(file, 'x')
      const session = await givenSessionUnsafe(data, file)
      ;(await session.whenInspecting()).thenFails('NotADirectory')
    })
  })

  describe('when the session id is not path-safe', () => {
    it('fails with InvalidSessionId without asking the port', async () => {
      const asked: Array<string> = []
      const port: SessionStatePort = {
        listShellRuns: (sessionId) => (asked.push(sessionId), TE.right([])),
        listRuns: (sessionId) => (asked.push(sessionId), TE.right([])),
      }
      const session = await givenSessionUnsafe(data, cwd)
      ;(await session.whenInspecting({ sessionId: '../etc' }, { port })).thenFails('InvalidSessionId')
      expect(asked).toEqual([])
    })
  })

  describe('when the tool catalog cannot be read', () => {
    it('fails with ToolCatalogUnavailable', async () => {
      const session = await givenSessionUnsafe(data, cwd)
      const toolNames = () => {
        throw new Error('registry not ready')
      }
      ;(await session.whenInspecting({}, { toolNames })).thenFails('ToolCatalogUnavailable')
    })
  })

  describe('when asked about the owner lock', () => {
    it('compares the lock with the configured hostname', async () => {
      const pid = await processes.deadPid()
      const lock = { pid, hostname: 'box-a', startedAt: new Date().toISOString() } as OwnerLock
      const port = data.port
      expect(await makeHostInspector({ port, toolNames: () => [], hostname: 'box-a' }).ownerLiveness(lock)).toBe(
        'stale',
      )
      expect(await makeHostInspector({ port, toolNames: () => [], hostname: 'box-b' }).ownerLiveness(lock)).toBe(
        'alive',
      )
      expect(await makeHostInspector({ port, toolNames: () => [] }).ownerLiveness(null)).toBe('none')
    })
  })
})
