/**
 * Planning is not a lease: each case approves a plan, changes one durable fact on real files (or one
 * host fact), and requires execution to refuse with the matching revalidation code before anything
 * is claimed or any model is called.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentRun, type ExecutionRejection, type RuntimeEvent, makeNonEmptyStringUnsafe } from '@maka/events'
import { checkpointUnavailable, processStartTime, type CheckpointProvider } from '@maka/host-inspector'
import type { Continuation, WorkspaceCheckpoint } from '@maka/planner'
import { claimPath, sessionRecordPath } from '@maka/store-jsonl'
import {
  givenApprovedPlan,
  givenInterruptedRun,
  trackWorlds,
  type InterruptedRun,
  type World,
  type WorldOptions,
  squatterHeader,
} from './support/world.js'

const world = trackWorlds()
const children: Array<ChildProcess> = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
})

interface Given {
  readonly w: World
  readonly source: InterruptedRun
  readonly c: Continuation
}

const readJson = async <A>(path: string): Promise<A> => JSON.parse(await readFile(path, 'utf8')) as A

/** Rewrites one committed ledger line in place; the row count stays the same. */
const rewriteRow = async (
  w: World,
  s: InterruptedRun,
  match: (row: RuntimeEvent) => boolean,
  change: (row: RuntimeEvent) => RuntimeEvent,
) => {
  const path = w.ledgerPathOf(s.sessionId, s.runId)
  const lines = (await readFile(path, 'utf8')).split('\n')
  let changed = 0
  const next = lines.map((line) => {
    if (line.length === 0) return line
    const row = JSON.parse(line) as RuntimeEvent
    if (!match(row)) return line
    changed += 1
    return JSON.stringify(change(row))
  })
  expect(changed).toBe(1)
  await writeFile(path, next.join('\n'))
}

const rewriteHeader = async (
  w: World,
  s: InterruptedRun,
  change: (h: Record<string, unknown>) => Record<string, unknown>,
) => {
  const path = w.headerPathOf(s.sessionId, s.runId)
  await writeFile(path, JSON.stringify(change(await readJson<Record<string, unknown>>(path))))
}

/**
 * Plans, mutates, executes; then checks: rejected with exactly `codes`, no provider asked for or
 * called, no claim file and (unless the target id was taken on purpose) no target run folder.
 */
const whenMutatedBetweenPlanAndExecute = async (
  mutate: (given: Given) => Promise<void>,
  codes: ReadonlyArray<ExecutionRejection>,
  options: WorldOptions & { readonly targetPreexists?: boolean } = {},
) => {
  const w = await world({ ...options })
  const source = await givenInterruptedRun(w)
  const { plan, continuation: c } = await givenApprovedPlan(w, source)
  const requestsBefore = w.requests.length

  await mutate({ w, source, c })
  const claimFile = claimPath(w.dataDir, source.sessionId, source.runId, c.sourceRuntimeEventHighWater)
  const claimExisted = existsSync(claimFile)
  const result = await w.runtime.execute(plan)

  expect(result._tag).toBe('Rejected')
  expect(result._tag === 'Rejected' && result.codes).toEqual(codes)
  expect(result._tag === 'Rejected' && result.messages.every((m) => m.length > 0 && !m.includes('_'))).toBe(true)
  expect(w.providersMade.filter((p) => p.kind === 'continuation')).toEqual([])
  expect(w.requests.length).toBe(requestsBefore)
  expect(existsSync(claimFile)).toBe(claimExisted)
  if (options.targetPreexists !== true) expect(existsSync(w.runDirOf(source.sessionId, c.runId))).toBe(false)
  expect(w.lifecycle[w.lifecycle.length - 1]).toStrictEqual({
    type: 'execution_failed',
    sessionId: source.sessionId,
    sourceRunId: source.runId,
    targetRunId: c.runId,
    errorClass: codes[0],
  })
  return { w, source, c }
}

describe('execute after the source changed', () => {
  describe('when a row was appended to the source ledger', () => {
    it('rejects with source_high_water_changed', async () => {
      await whenMutatedBetweenPlanAndExecute(
        async ({ w, source }) => {
          const rows = await w.ledger(source.sessionId, source.runId)
          const first = rows[0] as RuntimeEvent
          // A partial snapshot: it counts toward the high-water but is never replayed, so only the count changed.
          const extra = { ...first, id: makeNonEmptyStringUnsafe(`${source.runId}-late`), partial: true }
          const appended = await w.stores.events.append(source.sessionId, source.runId, extra)()
          expect(E.isRight(appended)).toBe(true)
        },
        ['source_high_water_changed'],
      )
    })
  })

  describe('when run.json was rewritten with another turn id', () => {
    it('rejects with source_identity_changed', async () => {
      await whenMutatedBetweenPlanAndExecute(
        ({ w, source }) => rewriteHeader(w, source, (h) => ({ ...h, turnId: 'turn-replaced' })),
        ['source_identity_changed'],
      )
    })
  })

  describe('when the source header’s terminal status changed', () => {
    it('rejects with source_terminal_changed', async () => {
      await whenMutatedBetweenPlanAndExecute(
        ({ w, source }) =>
          rewriteHeader(w, source, (h) => {
            const { failureClass: _dropped, ...rest } = h
            return { ...rest, status: 'completed' }
          }),
        ['source_terminal_changed'],
      )
    })
  })

  describe('when the source header’s cwd changed', () => {
    it('rejects with source_cwd_changed', async () => {
      await whenMutatedBetweenPlanAndExecute(
        async ({ w, source }) => {
          const elsewhere = join(w.root, 'elsewhere')
          await mkdir(elsewhere)
          await rewriteHeader(w, source, (h) => ({ ...h, cwd: elsewhere }))
        },
        ['source_cwd_changed'],
      )
    })
  })

  describe('when the session’s cwd now points at another directory', () => {
    it('rejects with source_cwd_changed and workspace_identity_changed', async () => {
      // The host observes cwd and identity from the session's cwd: another directory is another
      // path and another inode, so one change necessarily fails both checks.
      await whenMutatedBetweenPlanAndExecute(
        async ({ w, source }) => {
          const elsewhere = join(w.root, 'elsewhere')
          await mkdir(elsewhere)
          const path = sessionRecordPath(w.dataDir, source.sessionId)
          await writeFile(path, JSON.stringify({ ...(await readJson<Record<string, unknown>>(path)), cwd: elsewhere }))
        },
        ['source_cwd_changed', 'workspace_identity_changed'],
      )
    })
  })

  describe('when the workspace directory was replaced by a new one at the same path', () => {
    it('rejects with workspace_identity_changed', async () => {
      await whenMutatedBetweenPlanAndExecute(
        async ({ w }) => {
          await rename(w.workspace, `${w.workspace}-old`)
          await mkdir(w.workspace)
        },
        ['workspace_identity_changed'],
      )
    })
  })

  describe('when a background shell run started', () => {
    it('rejects with background_operation_started', async () => {
      await whenMutatedBetweenPlanAndExecute(
        async ({ w, source }) => {
          const child = spawn('sleep', ['30'], { stdio: 'ignore' })
          children.push(child)
          const pid = child.pid
          if (pid === undefined) throw new Error('sleep did not start')
          const startedAt = await processStartTime(pid)
          if (startedAt === null) throw new Error('no start time for sleep')
          const written = await w.stores.shellRuns.write({
            shellRunId: 'sh-0123456789abcdef',
            sessionId: source.sessionId,
            runId: source.runId,
            command: 'sleep 30',
            status: 'running',
            pid,
            startedAt: startedAt.toISOString(),
          } as Parameters<World['stores']['shellRuns']['write']>[0])()
          expect(E.isRight(written)).toBe(true)
        },
        ['background_operation_started'],
      )
    })
  })

  describe('when a tool was removed from the registry', () => {
    it('rejects with tool_catalog_changed', async () => {
      await whenMutatedBetweenPlanAndExecute(
        async ({ w }) => {
          const index = w.tools.findIndex((t) => t.name === 'mutate')
          w.tools.splice(index, 1)
          await Promise.resolve()
        },
        ['tool_catalog_changed'],
      )
    })
  })

  describe('when another run header holds the same continuationSource', () => {
    it('rejects with continuation_claim_conflict', async () => {
      await whenMutatedBetweenPlanAndExecute(
        async ({ w, source, c }) => {
          const sourceHeader = await w.header(source.sessionId, source.runId)
          const other = {
            ...sourceHeader,
            runId: 'run-other',
            invocationId: 'inv-other',
            turnId: 'turn-other',
            status: 'failed',
            parentRunId: source.runId,
            parentTurnId: sourceHeader.turnId,
            continuationSource: {
              sourceInvocationId: c.sourceInvocationId,
              sourceRunId: c.sourceRunId,
              sourceTurnId: c.sourceTurnId,
              sourceRuntimeEventHighWater: c.sourceRuntimeEventHighWater,
            },
          } as AgentRun
          expect(E.isRight(await w.stores.runs.create(other)())).toBe(true)
        },
        ['continuation_claim_conflict'],
      )
    })
  })

  describe('when another claim file holds the boundary', () => {
    it('rejects with continuation_claim_conflict and leaves that claim alone', async () => {
      let claimBytes = ''
      const { w, source, c } = await whenMutatedBetweenPlanAndExecute(
        async ({ w, source, c }) => {
          const path = claimPath(w.dataDir, source.sessionId, source.runId, c.sourceRuntimeEventHighWater)
          await mkdir(join(path, '..'), { recursive: true })
          claimBytes = JSON.stringify({
            sessionId: source.sessionId,
            sourceInvocationId: c.sourceInvocationId,
            sourceRunId: c.sourceRunId,
            sourceTurnId: c.sourceTurnId,
            sourceRuntimeEventHighWater: c.sourceRuntimeEventHighWater,
            targetInvocationId: 'inv-other',
            targetRunId: 'run-other',
            targetTurnId: 'turn-other',
            claimedAt: '2026-01-01T00:00:00.000Z',
          })
          await writeFile(path, claimBytes)
        },
        ['continuation_claim_conflict'],
      )
      expect(
        await readFile(claimPath(w.dataDir, source.sessionId, source.runId, c.sourceRuntimeEventHighWater), 'utf8'),
      ).toBe(claimBytes)
    })
  })

  describe('when the target run id already exists', () => {
    it('rejects with target_run_conflict and leaves that run alone', async () => {
      let headerBytes: Buffer | undefined
      const { w, source, c } = await whenMutatedBetweenPlanAndExecute(
        async ({ w, source, c }) => {
          const squatter = await squatterHeader(w, source, c.runId)
          expect(E.isRight(await w.stores.runs.create(squatter)())).toBe(true)
          headerBytes = await readFile(w.headerPathOf(source.sessionId, c.runId))
        },
        ['target_run_conflict'],
        { targetPreexists: true },
      )
      expect(await readFile(w.headerPathOf(source.sessionId, c.runId))).toEqual(headerBytes)
      expect(existsSync(w.ledgerPathOf(source.sessionId, c.runId))).toBe(false)
    })
  })

  describe('when a committed row’s content was rewritten (same row count)', () => {
    it('rejects with source_replay_changed', async () => {
      await whenMutatedBetweenPlanAndExecute(
        ({ w, source }) =>
          rewriteRow(
            w,
            source,
            (row) => row.content?.kind === 'function_response',
            (row) =>
              row.content?.kind === 'function_response'
                ? { ...row, content: { ...row.content, result: { count: 7 } } }
                : row,
          ),
        ['source_replay_changed'],
      )
    })
  })

  describe('when a committed row’s invocationId was rewritten', () => {
    it('rejects with source_ledger_identity_changed and source_replay_changed', async () => {
      // The rewritten row is model-visible, so the replay (which carries each row's identity) differs
      // from the planned one as well: one change, two codes.
      await whenMutatedBetweenPlanAndExecute(
        ({ w, source }) =>
          rewriteRow(
            w,
            source,
            (row) => row.content?.kind === 'function_call',
            (row) => ({ ...row, invocationId: makeNonEmptyStringUnsafe('inv-foreign') }),
          ),
        ['source_ledger_identity_changed', 'source_replay_changed'],
      )
    })
  })

  describe('when the workspace checkpoint changed', () => {
    it('rejects with workspace_checkpoint_changed', async () => {
      const checkpointFile = { path: '' }
      const checkpointProvider: CheckpointProvider = {
        checkpointFor: ({ sessionId, runId }) =>
          TE.tryCatch(
            async () =>
              existsSync(checkpointFile.path) ? await readJson<WorkspaceCheckpoint>(checkpointFile.path) : null,
            (cause) => checkpointUnavailable(sessionId, cause, runId),
          ),
      }
      // The checkpoint lives in a real file: first written to cover the recovered boundary, then moved.
      const w = await world({ checkpointProvider })
      checkpointFile.path = join(w.root, 'checkpoint.json')
      const source = await givenInterruptedRun(w)
      const rows = await w.ledger(source.sessionId, source.runId)
      await writeFile(
        checkpointFile.path,
        JSON.stringify({ ref: 'cp-1', restored: true, runtimeEventHighWater: rows.length }),
      )
      const { plan, continuation: c } = await givenApprovedPlan(w, source)
      expect(c.safetySnapshot.workspaceCheckpoint).toEqual({ ref: 'cp-1', runtimeEventHighWater: rows.length })

      await writeFile(
        checkpointFile.path,
        JSON.stringify({ ref: 'cp-2', restored: true, runtimeEventHighWater: rows.length }),
      )
      const result = await w.runtime.execute(plan)

      expect(result).toMatchObject({ _tag: 'Rejected', codes: ['workspace_checkpoint_changed'] })
      expect(w.providersMade.filter((p) => p.kind === 'continuation')).toEqual([])
      expect(existsSync(w.runDirOf(source.sessionId, c.runId))).toBe(false)
    })
  })
})
