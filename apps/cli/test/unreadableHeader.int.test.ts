/**
 * A run folder whose `run.json` exists but is broken (unparsable, or failing its exact shape) cannot
 * be ordered, so it might be the session's latest run: it is listed as unreadable, resuming the
 * latest parks with `source_run_unreadable`, and recovery reports it and leaves it byte for byte.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ParkReasonSentences } from '@maka/events'
import { hashTree, interruptedSession, json, removeScratch, runCli, scratch, scriptFile } from './support.js'

interface PlanJson {
  readonly disposition: string
  readonly rejectionReasons: ReadonlyArray<string>
  readonly sourceRunId: string | null
  readonly diagnostics: ReadonlyArray<{ readonly code: string; readonly detail: Record<string, unknown> }>
}

interface SessionsJson {
  readonly sessions: ReadonlyArray<{
    readonly sessionId: string
    readonly runCount: number
    readonly unreadableRuns: ReadonlyArray<{ readonly runId: string; readonly error: string }>
  }>
}

interface ShowJson {
  readonly runs: ReadonlyArray<{ readonly runId: string; readonly kind: string; readonly headerError?: string }>
}

const runIdsOf = async (dataDir: string, sessionId: string): Promise<ReadonlyArray<string>> =>
  (await readdir(join(dataDir, 'sessions', sessionId, 'runs'))).sort()

const headerPath = (dataDir: string, sessionId: string, runId: string) =>
  join(dataDir, 'sessions', sessionId, 'runs', runId, 'run.json')

describe('a run whose run.json is corrupt', () => {
  let env: Awaited<ReturnType<typeof scratch>>
  let data: Array<string>

  afterAll(removeScratch)

  beforeAll(async () => {
    env = await scratch()
    data = ['--data-dir', env.dataDir]
  })

  describe('when it is the only run of the session (unparsable)', () => {
    it('is listed as unreadable by sessions and show, parks resume plan and resume, and recovery keeps it', async () => {
      await interruptedSession(env.dataDir, env.workspace, 'lone', env.root)
      const [runId] = await runIdsOf(env.dataDir, 'lone')
      if (runId === undefined) throw new Error('no run was made')
      await writeFile(headerPath(env.dataDir, 'lone', runId), '{"runId": "half a header')
      const bytes = await readFile(headerPath(env.dataDir, 'lone', runId))

      const listed = await runCli(['sessions', ...data, '--json'])
      expect(listed.code).toBe(0)
      expect(json<SessionsJson>(listed).sessions.find((s) => s.sessionId === 'lone')).toMatchObject({
        runCount: 1,
        unreadableRuns: [{ runId, error: 'Unreadable' }],
      })
      const text = await runCli(['sessions', ...data])
      expect(text.stdout).toContain(`[unreadable run: ${runId} (Unreadable)]`)
      expect(text.stdout).toContain('1 run,')

      const shown = await runCli(['show', 'lone', ...data, '--json'])
      expect(json<ShowJson>(shown).runs).toEqual([expect.objectContaining({ runId, kind: 'unreadable' })])
      expect((await runCli(['show', 'lone', ...data])).stdout).toContain(`${runId} unreadable header`)

      const recovered = await runCli(['recover', ...data, '--json'])
      expect(recovered.code).toBe(0)
      expect(json<{ actions: ReadonlyArray<Record<string, unknown>> }>(recovered).actions).toContainEqual(
        expect.objectContaining({ sessionId: 'lone', runId, action: 'left_untouched' }),
      )

      const before = await hashTree(env.dataDir)
      const planned = await runCli(['resume', 'plan', ...data, '--session', 'lone', '--json'], { flag: true })
      expect(planned.code).toBe(3)
      const plan = json<PlanJson>(planned)
      expect(plan).toMatchObject({
        disposition: 'park',
        rejectionReasons: ['source_run_unreadable'],
        sourceRunId: runId,
      })
      expect(plan.diagnostics[0]?.detail).toMatchObject({ reason: 'listed_run_unreadable', runId })

      const resumed = await runCli(['resume', ...data, '--session', 'lone'], { flag: true })
      expect(resumed.code).toBe(3)
      expect(resumed.stdout).toContain(ParkReasonSentences.source_run_unreadable)
      expect(await hashTree(env.dataDir)).toBe(before)
      expect(await readFile(headerPath(env.dataDir, 'lone', runId))).toEqual(bytes)
    })
  })

  describe('when a newer run fails its exact shape while an older interrupted run is readable', () => {
    it('never resumes the older run behind it from the latest entry; a named run parks on the unobservable session', async () => {
      await interruptedSession(env.dataDir, env.workspace, 'pair', env.root)
      const [older] = await runIdsOf(env.dataDir, 'pair')
      if (older === undefined) throw new Error('no run was made')
      // The recovery pass of `run` closes the older run as app_restarted; then a newer turn completes.
      const answer = await scriptFile(env.root, 'answer.json', [{ text: 'A newer answer.' }])
      const newerTurn = await runCli(
        ['run', ...data, '--session', 'pair', '--cwd', env.workspace, '--script', answer, 'again'],
        { flag: true },
      )
      expect(newerTurn.code).toBe(0)
      const newer = (await runIdsOf(env.dataDir, 'pair')).find((id) => id !== older)
      if (newer === undefined) throw new Error('no newer run was made')
      const header = JSON.parse(await readFile(headerPath(env.dataDir, 'pair', newer), 'utf8')) as object
      await writeFile(headerPath(env.dataDir, 'pair', newer), JSON.stringify({ ...header, surprise: true }))

      const latest = await runCli(['resume', 'plan', ...data, '--session', 'pair', '--json'], { flag: true })
      expect(latest.code).toBe(3)
      expect(json<PlanJson>(latest)).toMatchObject({
        rejectionReasons: ['source_run_unreadable'],
        sourceRunId: newer,
      })
      const resumed = await runCli(['resume', ...data, '--session', 'pair', '--json'], { flag: true })
      expect(resumed.code).toBe(3)
      expect(await runIdsOf(env.dataDir, 'pair')).toEqual([older, newer].sort())

      // Named explicitly, the older run is planned, but the broken header might be an open
      // continuation or child run: the host facts cannot be observed, so it parks (decisions).
      const named = await runCli(['resume', 'plan', ...data, '--session', 'pair', '--run', older, '--json'], {
        flag: true,
      })
      expect(named.code).toBe(3)
      expect(json<PlanJson>(named)).toMatchObject({
        rejectionReasons: ['safety_observation_unavailable'],
        sourceRunId: older,
      })

      const listed = await runCli(['sessions', ...data, '--json'])
      expect(json<SessionsJson>(listed).sessions.find((s) => s.sessionId === 'pair')).toMatchObject({
        runCount: 2,
        unreadableRuns: [{ runId: newer, error: 'Unreadable' }],
      })
    })
  })
})
