/**
 * Every command's exit codes and `--json` output, on real data dirs made by the built CLI itself.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ParkReasonSentences } from '@maka/events'
import {
  hashTree,
  removeScratch,
  interruptedSession,
  json,
  jsonLines,
  ledgerRows,
  runCli,
  runHeaders,
  scratch,
  scriptFile,
} from './support.js'

const PLAN_KEYS = [
  'diagnostics',
  'disposition',
  'rejectionReasons',
  'sourceRunId',
  'sourceRuntimeEventHighWater',
  'sourceRuntimeEventPrefixDigest',
]
const CONTINUATION_KEYS = [
  'invocationId',
  'runId',
  'runtimeContext',
  'safetySnapshot',
  'sessionId',
  'sourceInvocationId',
  'sourceRunId',
  'sourceRuntimeContext',
  'sourceRuntimeEventHighWater',
  'sourceTurnId',
  'turnId',
]

interface SessionsJson {
  readonly sessions: ReadonlyArray<{
    readonly sessionId: string
    readonly interrupted: boolean
    readonly latestRun: { readonly status: string; readonly kind: string; readonly failureClass?: string } | null
  }>
}

describe('maka commands', { timeout: 120_000 }, () => {
  let env: Awaited<ReturnType<typeof scratch>>
  let data: Array<string>

  afterAll(removeScratch)

  beforeAll(async () => {
    env = await scratch()
    data = ['--data-dir', env.dataDir]
    const answer = await scriptFile(env.root, 'answer.json', [
      { toolCall: { name: 'read_file', args: { path: 'hello.txt' } } },
      { toolCall: { name: 'list_dir', args: { path: '.' } } },
      { text: 'All done here.' },
    ])
    const done = await runCli(
      ['run', ...data, '--session', 'done', '--cwd', env.workspace, '--script', answer, 'look around'],
      {
        flag: true,
      },
    )
    expect(done.code).toBe(0)
    await interruptedSession(env.dataDir, env.workspace, 'cut0', env.root)
  })

  describe('when a turn runs headless', () => {
    it('streams one line per committed event, tool calls by name only, and exits 0 when completed', async () => {
      const script = await scriptFile(env.root, 'peek.json', [
        { toolCall: { name: 'write_file', args: { path: 'x.txt', content: 'SECRET-CONTENT' } } },
        { text: 'Finished the peek.' },
      ])
      const result = await runCli([
        'run',
        ...data,
        '--session',
        'peek',
        '--cwd',
        env.workspace,
        '--script',
        script,
        'peek',
      ])
      expect(result.code).toBe(0)
      const lines = result.stdout.trim().split('\n')
      expect(lines[0]).toMatch(/^user\s+text\s+peek$/)
      expect(lines).toContainEqual(expect.stringMatching(/^model\s+function_call\s+write_file$/))
      // Without --yes a mutating tool is denied, and the decision is recorded.
      expect(lines).toContainEqual(expect.stringMatching(/^system\s+permission_decision\s+deny$/))
      expect(lines).toContainEqual(expect.stringMatching(/^model\s+text\s+Finished the peek\.$/))
      expect(result.stdout).not.toContain('SECRET-CONTENT')
      expect(existsSync(join(env.workspace, 'x.txt'))).toBe(false)
    })

    it('exits 1 when the turn fails', async () => {
      const script = await scriptFile(env.root, 'boom.json', [{ error: 'boom' }])
      const result = await runCli([
        'run',
        ...data,
        '--session',
        'boom',
        '--cwd',
        env.workspace,
        '--script',
        script,
        'fail please',
      ])
      expect(result.code).toBe(1)
      expect(result.stdout).toMatch(/terminal\s+failed \(provider_error\)/)
    })
  })

  describe('when listing sessions', () => {
    it('marks the interrupted session, and not the completed one', async () => {
      const result = await runCli(['sessions', ...data, '--json'])
      expect(result.code).toBe(0)
      const { sessions } = json<SessionsJson>(result)
      const byId = new Map(sessions.map((s) => [s.sessionId, s]))
      expect(byId.get('done')).toMatchObject({ interrupted: false, latestRun: { status: 'completed', kind: 'turn' } })
      expect(byId.get('cut0')?.interrupted).toBe(true)
      const text = await runCli(['sessions', ...data])
      expect(text.stdout).toMatch(/cut0 .*\[interrupted\]/)
    })

    it('sees no sessions in a data dir that does not exist, and does not create it', async () => {
      const missing = join(env.root, 'nowhere')
      const result = await runCli(['sessions', '--data-dir', missing, '--json'])
      expect(result.code).toBe(0)
      expect(json<SessionsJson>(result).sessions).toEqual([])
      expect(existsSync(missing)).toBe(false)
    })
  })

  describe('when showing a session', () => {
    it('prints the runs with their timelines and Phase 0 operation statuses', async () => {
      const result = await runCli(['show', 'done', ...data, '--json'])
      expect(result.code).toBe(0)
      const detail = json<{
        roots: ReadonlyArray<string>
        runs: ReadonlyArray<{
          runId: string
          kind: string
          highWater: number
          timeline: ReadonlyArray<Record<string, unknown>>
        }>
      }>(result)
      expect(detail.runs).toHaveLength(1)
      const [run] = detail.runs
      expect(detail.roots).toEqual([run?.runId])
      expect(run?.kind).toBe('turn')
      // With the flag on, a turn writes the tool journal: a dispatch row before each tool runs.
      expect(run?.timeline.map((e) => e['kind'])).toEqual([
        'text',
        'function_call',
        'tool_dispatch',
        'function_response',
        'function_call',
        'tool_dispatch',
        'function_response',
        'text',
        'terminal',
      ])
      expect(run?.timeline[1]).toMatchObject({ toolName: 'read_file', operationStatus: 'succeeded' })
      // Tool arguments and results are never printed.
      expect(result.stdout).not.toContain('hello.txt')
      expect(result.stdout).not.toContain('SECRET-RESULT')
      const text = await runCli(['show', 'done', ...data])
      expect(text.code).toBe(0)
      expect(text.stdout).toMatch(/function_call\s+read_file \[succeeded\]/)
    })
  })

  describe('when an interrupted session is planned, recovered and resumed', () => {
    it('parks without the flag, skips recovery with --no-recover, then recovers, continues and resumes once', async () => {
      // Made here: any earlier command's startup recovery would already have closed it.
      await interruptedSession(env.dataDir, env.workspace, 'cut', env.root)
      const before = await hashTree(env.dataDir)
      // Without the flag every plan parks, and the sentence is printed (not the code alone).
      const off = await runCli(['resume', 'plan', ...data, '--session', 'cut', '--no-recover'])
      expect(off.code).toBe(3)
      expect(off.stdout).toContain(ParkReasonSentences.resume_feature_disabled)

      // --no-recover: the header is still non-terminal, so the plan parks; nothing was written.
      const raw = await runCli(['resume', 'plan', ...data, '--session', 'cut', '--no-recover', '--json'], {
        flag: true,
      })
      expect(raw.code).toBe(3)
      expect(json<{ rejectionReasons: ReadonlyArray<string> }>(raw).rejectionReasons).toContain(
        'terminal_repair_failed',
      )
      expect(await hashTree(env.dataDir)).toBe(before)

      // With recovery: the source is closed as app_restarted and the plan continues.
      const planned = await runCli(['resume', 'plan', ...data, '--session', 'cut', '--json'], { flag: true })
      expect(planned.code).toBe(0)
      const plan = json(planned)
      expect(Object.keys(plan).sort()).toEqual([...PLAN_KEYS, 'continuation'].sort())
      const continuation = plan['continuation'] as Record<string, unknown>
      expect(Object.keys(continuation).sort()).toEqual(CONTINUATION_KEYS)
      expect(Object.keys(continuation['safetySnapshot'] as object).sort()).toEqual([
        'availableToolNames',
        'backgroundOperationsSettled',
        'toolRecoveryModes',
        'workspaceIdentity',
      ])
      expect(plan['disposition']).toBe('continue')
      // The history is printed once: the source segment is a reference to the tail of runtimeContext.
      const history = continuation['runtimeContext'] as ReadonlyArray<{ readonly runId: string }>
      const own = history.filter((event) => event.runId === plan['sourceRunId'])
      expect(own.length).toBeGreaterThan(0)
      expect(continuation['sourceRuntimeContext']).toEqual({
        runtimeContextOffset: history.length - own.length,
        count: own.length,
      })
      const [source] = await runHeaders(env.dataDir, 'cut')
      expect(source).toMatchObject({ status: 'failed', failureClass: 'app_restarted' })

      const script = await scriptFile(env.root, 'cont.json', [{ text: 'Picked up where it stopped.' }])
      const resumed = await runCli(['resume', ...data, '--session', 'cut', '--script', script, '--json'], {
        flag: true,
      })
      expect(resumed.code).toBe(0)
      // --json is newline-delimited: the plan, one object per committed event, then the result.
      const stream = jsonLines(resumed)
      expect(stream[0]).toMatchObject({ type: 'plan', sessionId: 'cut', plan: { disposition: 'continue' } })
      expect(stream.slice(1, -1).every((line) => line['type'] === 'event')).toBe(true)
      expect(stream.slice(1, -1).map((line) => line['kind'])).toEqual(['continuation_start', 'text', 'terminal'])
      const out = stream[stream.length - 1] as { result: { _tag: string; status: string; targetRunId: string } }
      expect(out).toMatchObject({ type: 'result', command: 'resume', exitCode: 0 })
      expect(out.result).toMatchObject({ _tag: 'Finished', status: 'completed' })
      const rows = await ledgerRows(env.dataDir, 'cut', out.result.targetRunId)
      expect(rows.some((row) => row['role'] === 'user')).toBe(false)

      // The latest top-level run is now the completed continuation: nothing to resume, exit 3.
      const again = await runCli(['resume', ...data, '--session', 'cut'], { flag: true })
      expect(again.code).toBe(3)
      expect(again.stdout).toContain(ParkReasonSentences.resume_candidate_missing)
      const parkedPlan = await runCli(['resume', 'plan', ...data, '--session', 'cut', '--json'], { flag: true })
      expect(parkedPlan.code).toBe(3)
      expect(Object.keys(json(parkedPlan)).sort()).toEqual(PLAN_KEYS)

      const shown = await runCli(['show', 'cut', ...data, '--json'])
      const detail = json<{
        roots: ReadonlyArray<string>
        runs: ReadonlyArray<{ runId: string; kind: string; children: ReadonlyArray<string> }>
      }>(shown)
      expect(detail.roots).toHaveLength(1)
      const root = detail.runs.find((r) => r.runId === detail.roots[0])
      expect(root?.children).toEqual([out.result.targetRunId])
    })

    it('reports each repair of the recovery pass', async () => {
      await interruptedSession(env.dataDir, env.workspace, 'cut2', env.root)
      const first = await runCli(['recover', ...data, '--json'])
      expect(first.code).toBe(0)
      const { actions } = json<{ actions: ReadonlyArray<Record<string, unknown>> }>(first)
      expect(actions).toContainEqual(expect.objectContaining({ sessionId: 'cut2', action: 'recovered_terminal' }))
      const second = await runCli(['recover', ...data])
      expect(second.code).toBe(0)
      expect(second.stdout).toContain('nothing to repair')
    })

    it('recovers only the session a scoped command works on; recover repairs the rest', async () => {
      await interruptedSession(env.dataDir, env.workspace, 'scope-a', env.root)
      await interruptedSession(env.dataDir, env.workspace, 'scope-b', env.root)

      const planned = await runCli(['resume', 'plan', ...data, '--session', 'scope-a', '--json'], { flag: true })

      expect(planned.code).toBe(0)
      expect((await runHeaders(env.dataDir, 'scope-a'))[0]).toMatchObject({ status: 'failed' })
      expect((await runHeaders(env.dataDir, 'scope-b'))[0]).toMatchObject({ status: 'running' })
      const all = await runCli(['recover', ...data, '--json'])
      const { actions } = json<{ actions: ReadonlyArray<Record<string, unknown>> }>(all)
      expect(actions).toEqual([expect.objectContaining({ sessionId: 'scope-b', action: 'recovered_terminal' })])
    })

    it('plans the most recent session when --session is left out', async () => {
      await interruptedSession(env.dataDir, env.workspace, 'zlatest', env.root)
      const result = await runCli(['resume', 'plan', ...data, '--json'], { flag: true })
      expect(result.code).toBe(0)
      expect((json(result)['continuation'] as Record<string, unknown>)['sessionId']).toBe('zlatest')
    })
  })
})
