/**
 * `maka demo` for both crash points, asserting on the data dir it leaves behind.
 */
import { existsSync } from 'node:fs'
import { readFile, readdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ParkReasonNextSteps, ParkReasonSentences } from '@maka/events'
import { json, ledgerRows, removeLater, removeScratch, runCli, runHeaders, scratch } from './support.js'

interface DemoJson {
  readonly ok: boolean
  readonly dataDir: string
  readonly workspace: string
  readonly sessionId: string
  readonly sourceRunId: string
  readonly steps: ReadonlyArray<{ readonly n: number; readonly ok: boolean; readonly title: string }>
  readonly plan: { readonly disposition: string; readonly rejectionReasons: ReadonlyArray<string> }
  readonly result: { readonly _tag: string; readonly status?: string; readonly targetRunId?: string } | null
  readonly lineage: Record<string, unknown>
}

describe('maka demo', () => {
  afterAll(removeScratch)

  describe('when killed after a tool response', () => {
    it('recovers, continues from the pinned boundary, writes notes.txt once and leaves the claim', async () => {
      const result = await runCli(['demo', '--json', '--keep'])
      expect(result.code).toBe(0)
      const demo = json<DemoJson>(result)
      removeLater(dirname(demo.workspace))
      expect(demo.ok).toBe(true)
      expect(demo.steps.map((s) => s.ok)).toEqual([true, true, true, true, true, true])
      expect(demo.plan.disposition).toBe('continue')
      expect(demo.result).toMatchObject({ _tag: 'Finished', status: 'completed' })

      const headers = await runHeaders(demo.dataDir, demo.sessionId)
      expect(headers).toHaveLength(2)
      const source = headers.find((h) => h['runId'] === demo.sourceRunId)
      const continuation = headers.find((h) => h['runId'] !== demo.sourceRunId)
      expect(source).toMatchObject({ status: 'failed', failureClass: 'app_restarted' })
      const sourceRows = await ledgerRows(demo.dataDir, demo.sessionId, demo.sourceRunId)
      expect(continuation).toMatchObject({
        status: 'completed',
        continuationSource: { sourceRunId: demo.sourceRunId, sourceRuntimeEventHighWater: sourceRows.length },
      })

      const continuationRows = await ledgerRows(demo.dataDir, demo.sessionId, String(continuation?.['runId']))
      // The continuation keeps the tool journal: its start row carries the protocol marker.
      expect(continuationRows[0]?.['actions']).toEqual({
        stateDelta: { continuationStart: true },
        runtimeProtocol: { toolBoundary: 't1_after_preflight_v1' },
      })
      // No user message: the only user-role rows are permission decisions, never text.
      expect(continuationRows.filter((r) => r['role'] === 'user' && r['content'] !== undefined)).toEqual([])
      const writes = [...sourceRows, ...continuationRows].filter((r) => {
        const content = r['content'] as Record<string, unknown> | undefined
        return (
          content?.['kind'] === 'function_response' && content['name'] === 'write_file' && content['isError'] !== true
        )
      })
      expect(writes).toHaveLength(1)
      expect(await readFile(join(demo.workspace, 'notes.txt'), 'utf8')).toContain('Notes from the maka demo.')

      const claimFile = join(
        demo.dataDir,
        'sessions',
        demo.sessionId,
        'claims',
        `${demo.sourceRunId}@${sourceRows.length}.json`,
      )
      const claim = JSON.parse(await readFile(claimFile, 'utf8')) as Record<string, unknown>
      expect(claim['targetRunId']).toBe(continuation?.['runId'])
    })
  })

  describe('when killed after a function call, with the tool journal (the default)', () => {
    it('continues by running the call that never started, once, and exits 0', async () => {
      const { dataDir } = await scratch()
      const result = await runCli(['demo', '--at', 'after_function_call', '--data-dir', dataDir])
      expect(result.code).toBe(0)
      const workspace = /^workspace\s+(\S+)$/m.exec(result.stdout)?.[1]
      if (workspace !== undefined) removeLater(dirname(workspace))
      expect(result.stdout).toContain('the tool journal proves the interrupted call never started')
      expect(result.stdout).toContain('the call that never started was run again, once')
      expect(result.stdout).toContain('notes.txt written exactly once')
      const [sessionId] = await readdir(join(dataDir, 'sessions'))
      const headers = await runHeaders(dataDir, String(sessionId))
      expect(headers.map((h) => h['status']).sort()).toEqual(['completed', 'failed'])
    })
  })

  describe('when killed after a function call, without the tool journal', () => {
    it('parks with dangling_tool_state, prints every sentence, creates no continuation and exits 0', async () => {
      const { dataDir } = await scratch()
      const result = await runCli(['demo', '--at', 'after_function_call', '--data-dir', dataDir], {
        env: { MAKA_RUNTIME_TOOL_JOURNAL: '0' },
      })
      expect(result.code).toBe(0)
      const workspace = /^workspace\s+(\S+)$/m.exec(result.stdout)?.[1]
      if (workspace !== undefined) removeLater(dirname(workspace))
      expect(result.stdout).toContain(ParkReasonSentences.dangling_tool_state)
      // A park names the way on (issue 24): what to check, and that a new turn keeps the conversation.
      expect(result.stdout).toContain(`next: ${ParkReasonNextSteps.dangling_tool_state}`)
      expect(result.stdout).toContain('Every step behaved as the contract says')
      expect(result.stdout).toContain('forced on')
      expect(result.stdout).toMatch(/^1\. /m)
      // Piped output is plain text.
      expect(result.stdout).not.toContain('\u001b[')

      const [sessionId] = await readdir(join(dataDir, 'sessions'))
      const headers = await runHeaders(dataDir, String(sessionId))
      expect(headers).toHaveLength(1)
      expect(headers[0]).toMatchObject({ status: 'failed', failureClass: 'app_restarted' })
      expect(
        existsSync(join(dataDir, 'sessions', String(sessionId), 'claims'))
          ? await readdir(join(dataDir, 'sessions', String(sessionId), 'claims'))
          : [],
      ).toEqual([])
      const plan = await runCli(['resume', 'plan', '--data-dir', dataDir, '--json'], {
        flag: true,
        env: { MAKA_RUNTIME_TOOL_JOURNAL: '0' },
      })
      expect(plan.code).toBe(3)
      expect(json<{ rejectionReasons: ReadonlyArray<string> }>(plan).rejectionReasons).toContain('dangling_tool_state')
    })
  })
})
