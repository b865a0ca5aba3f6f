/**
 * Ctrl+C is not a crash: a real `maka run` / `maka resume` child gets SIGINT or SIGTERM while its
 * scripted model waits. One signal: the ledger ends in exactly one `cancelled` terminal event with
 * a matching header, the owner lock is gone, exit 130 (143). Two signals together: the child exits
 * at once and leaves a non-terminal run that `maka recover` closes as `app_restarted`.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CLI,
  cliEnv,
  json,
  ledgerRows,
  removeScratch,
  runCli,
  runHeaders,
  scratch,
  scriptFile,
  waitFor,
} from './support.js'

interface Child {
  readonly child: ChildProcessWithoutNullStreams
  readonly out: () => string
  readonly err: () => string
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const start = (args: ReadonlyArray<string>): Child => {
  const child = spawn(process.execPath, [CLI, ...args], { env: cliEnv(true), stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('close', (code, signal) => done({ code, signal })),
  )
  return { child, out: () => out, err: () => err, closed }
}

const terminalsOf = (rows: ReadonlyArray<Record<string, unknown>>) =>
  rows.filter((row) => (row['actions'] as Record<string, unknown> | undefined)?.['endInvocation'] === true)

describe('interrupting maka with a signal', { timeout: 120_000 }, () => {
  let env: Awaited<ReturnType<typeof scratch>>
  let slow = ''
  const data = () => ['--data-dir', env.dataDir]

  beforeAll(async () => {
    env = await scratch()
    slow = await scriptFile(env.root, 'slow.json', [{ delayMs: 600_000 }, { text: 'never said' }])
  })

  afterAll(removeScratch)

  const runUntilWaiting = async (sessionId: string, extra: ReadonlyArray<string> = []) => {
    const run = start([
      'run',
      ...data(),
      '--session',
      sessionId,
      '--cwd',
      env.workspace,
      '--script',
      slow,
      ...extra,
      'wait',
    ])
    await waitFor(
      'the initial user row',
      () => run.out().includes('"kind":"text"') || /user\s+text/.test(run.out()),
      30_000,
    )
    return run
  }

  const expectCancelled = async (sessionId: string) => {
    const [header] = await runHeaders(env.dataDir, sessionId)
    expect(header).toMatchObject({ status: 'cancelled', failureClass: 'user_interrupted' })
    const rows = await ledgerRows(env.dataDir, sessionId, String(header?.['runId']))
    const terminals = terminalsOf(rows)
    expect(terminals).toHaveLength(1)
    expect(rows[rows.length - 1]).toEqual(terminals[0])
    expect(terminals[0]).toMatchObject({
      status: 'cancelled',
      actions: { stateDelta: { failureClass: 'user_interrupted' } },
    })
    expect(existsSync(join(env.dataDir, 'sessions', sessionId, 'owner.lock'))).toBe(false)
    return String(header?.['runId'])
  }

  describe('when maka run gets one SIGINT', () => {
    it('cancels the run durably, releases the lock, says one line and exits 130', async () => {
      const run = await runUntilWaiting('int1')
      run.child.kill('SIGINT')
      const { code } = await run.closed

      expect(code).toBe(130)
      const runId = await expectCancelled('int1')
      expect(run.err()).toContain(`maka: interrupted; run ${runId} cancelled`)
      expect(run.out()).toContain('cancelled (user_interrupted)')
    })

    it('leaves a boundary that resume plan continues (a cancelled run is resumable)', async () => {
      const planned = await runCli(['resume', 'plan', ...data(), '--session', 'int1', '--json'], { flag: true })
      expect(planned.code).toBe(0)
      const [header] = await runHeaders(env.dataDir, 'int1')
      expect(json(planned)).toMatchObject({ disposition: 'continue', sourceRunId: header?.['runId'] })
    })
  })

  describe('when maka run --json gets one SIGTERM', () => {
    it('cancels the run the same way and exits 143, ending the stream with a result object', async () => {
      const run = await runUntilWaiting('term1', ['--json'])
      run.child.kill('SIGTERM')
      const { code } = await run.closed

      expect(code).toBe(143)
      const runId = await expectCancelled('term1')
      const lines = run
        .out()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(lines.map((l) => l['type'])).toEqual(['event', 'event', 'result'])
      expect(lines[1]).toMatchObject({ kind: 'terminal', status: 'cancelled', runId })
      expect(lines[2]).toMatchObject({ command: 'run', status: 'cancelled', runId, exitCode: 143 })
    })
  })

  describe('when maka run gets two signals at once', () => {
    it('exits at once and leaves a run that recovery closes as app_restarted', async () => {
      const run = await runUntilWaiting('twice')
      // Two SIGINTs pending together would merge into one, so the second is a SIGTERM; the child is
      // stopped while both are sent, so it sees them together, before the cancel can finish.
      run.child.kill('SIGSTOP')
      run.child.kill('SIGINT')
      run.child.kill('SIGTERM')
      run.child.kill('SIGCONT')
      const { code } = await run.closed

      // The exit code is the first signal's; which of the two the process handles first is its own.
      expect([130, 143]).toContain(code)
      expect(run.err()).toContain('interrupted again')
      const [header] = await runHeaders(env.dataDir, 'twice')
      // Non-terminal: the signals may land just before or after the header says running.
      expect(['created', 'running']).toContain(header?.['status'])
      const runId = String(header?.['runId'])
      expect(terminalsOf(await ledgerRows(env.dataDir, 'twice', runId))).toEqual([])

      const recovered = await runCli(['recover', ...data(), '--json'])
      expect(recovered.code).toBe(0)
      const [after] = await runHeaders(env.dataDir, 'twice')
      expect(after).toMatchObject({ status: 'failed', failureClass: 'app_restarted' })
      const terminals = terminalsOf(await ledgerRows(env.dataDir, 'twice', runId))
      expect(terminals).toHaveLength(1)
      expect(existsSync(join(env.dataDir, 'sessions', 'twice', 'owner.lock'))).toBe(false)
    })
  })

  describe('when maka resume --json gets one SIGINT during the continuation', () => {
    it('cancels the continuation and exits 130; the stream has the plan, the events and the result', async () => {
      const resume = start(['resume', ...data(), '--session', 'int1', '--script', slow, '--json'])
      await waitFor('the continuation-start row', () => resume.out().includes('"kind":"continuation_start"'), 30_000)
      resume.child.kill('SIGINT')
      const { code } = await resume.closed

      expect(code).toBe(130)
      const lines = resume
        .out()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(lines.map((l) => l['type'])).toEqual(['plan', 'event', 'event', 'result'])
      expect(lines[0]).toMatchObject({ sessionId: 'int1', plan: { disposition: 'continue' } })
      const result = lines[3] as { result: { targetRunId: string }; exitCode: number }
      expect(result).toMatchObject({ command: 'resume', exitCode: 130, result: { status: 'cancelled' } })
      const headers = await runHeaders(env.dataDir, 'int1')
      const target = headers.find((h) => h['runId'] === result.result.targetRunId)
      expect(target).toMatchObject({ status: 'cancelled', failureClass: 'user_interrupted' })
      expect(terminalsOf(await ledgerRows(env.dataDir, 'int1', result.result.targetRunId))).toHaveLength(1)
      expect(existsSync(join(env.dataDir, 'sessions', 'int1', 'owner.lock'))).toBe(false)
      expect(resume.err()).toContain(`maka: interrupted; run ${result.result.targetRunId} cancelled`)
    })
  })
})
