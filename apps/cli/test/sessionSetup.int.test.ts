/**
 * A session keeps its setup (issue 24 items 1 and 2), through the built CLI: `run --session` and
 * `resume` reuse the model, base URL and permission mode the session's runs recorded and say so in
 * one line; a `--yes` turn killed with SIGKILL is resumed with `write_file` allowed; a turn run
 * without the resume flag records its workspace identity, so its crash can be resumed once the flag
 * is on; the model receives a denial wrapped once; `maka resume` without `--session` finds the
 * interrupted session of the current folder (then of another folder, saying so); `--pick` without a
 * terminal lists the interrupted sessions with their titles and exits 2.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, rmSync } from 'node:fs'
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it, onTestFinished } from 'vitest'
import { type Answer, type EndpointDouble, startEndpointDouble } from './endpointDouble.js'
import {
  CLI,
  interruptedSession,
  ledgerRows,
  removeScratch,
  runCli,
  runHeaders,
  scratch,
  scriptFile,
  tmuxSocketPath,
  waitFor,
} from './support.js'

const doubles: Array<EndpointDouble> = []
afterEach(async () => {
  await Promise.all(doubles.splice(0).map((d) => d.close()))
})
afterAll(removeScratch)

const endpoint = async (...answers: ReadonlyArray<Answer>) => {
  const double = await startEndpointDouble(answers)
  doubles.push(double)
  return double
}

/**
 * A real `maka run` SIGKILLed right after its first tool result was committed; its script then waits.
 * `args` are more flags of the run (`--yes`); `flag` turns the resume flag on.
 */
const crashedTurn = async (options: {
  readonly dataDir: string
  readonly workspace: string
  readonly root: string
  readonly sessionId: string
  readonly args?: ReadonlyArray<string>
  readonly flag: boolean
  readonly prompt?: string
}): Promise<void> =>
  interruptedSession(options.dataDir, options.workspace, options.sessionId, options.root, {}, options)

const USING = /^maka: using (.+) \((.+)\) · permission mode (\w+) \((.+)\)$/m

describe('a session keeps its setup', () => {
  describe('when run --session continues a session that used an openai-compatible endpoint', () => {
    it('uses the same model and base URL without any flag, and says so', async () => {
      const double = await endpoint({ text: 'first' }, { text: 'second' })
      const { dataDir, workspace } = await scratch()
      const key = { env: { MAKA_API_KEY: 'test' } }
      const first = await runCli(
        [
          'run',
          '--data-dir',
          dataDir,
          '--session',
          's1',
          '--cwd',
          workspace,
          '--provider',
          'openai-compatible',
          '--base-url',
          double.baseUrl,
          '--model',
          'fake-1',
          'hello',
        ],
        key,
      )
      expect(first.code, first.stderr).toBe(0)
      const second = await runCli(['run', '--data-dir', dataDir, '--session', 's1', 'again'], key)
      expect(second.code, second.stderr).toBe(0)
      expect(double.requests.map((r) => r['model'])).toEqual(['fake-1', 'fake-1'])
      expect(second.stderr.match(USING)?.slice(1)).toEqual([
        `openai-compatible model fake-1 at ${double.baseUrl}`,
        'recorded in session s1',
        'deny',
        'recorded in session s1',
      ])
      const headers = await runHeaders(dataDir, 's1')
      expect(headers.map((h) => [h['providerId'], h['modelId'], h['providerBaseUrl'], h['permissionMode']])).toEqual([
        ['openai-compatible', 'fake-1', double.baseUrl, 'deny'],
        ['openai-compatible', 'fake-1', double.baseUrl, 'deny'],
      ])
    })
  })

  describe('when run --session continues a session whose turn ran with --yes', () => {
    it('keeps permission mode allow, and a flag still says otherwise', async () => {
      const { dataDir, workspace, root } = await scratch()
      const script = await scriptFile(root, 'write.json', [
        { toolCall: { name: 'write_file', args: { path: 'a.txt', content: 'A' } } },
        { text: 'written' },
      ])
      const data = ['--data-dir', dataDir, '--session', 'y', '--script', script]
      expect((await runCli(['run', ...data, '--cwd', workspace, '--yes', 'write a'])).code).toBe(0)
      const again = await runCli(['run', ...data, 'write a again'])
      expect(again.code, again.stderr).toBe(0)
      expect(again.stderr.match(USING)?.slice(3)).toEqual(['allow', 'recorded in session y'])
      expect(again.stdout).not.toContain('denied')
      const denied = await runCli(['run', ...data, '--permission-mode', 'deny', 'once more'])
      expect(denied.stderr.match(USING)?.slice(3)).toEqual(['deny', '--permission-mode'])
      expect(denied.stdout).toMatch(/^tool\s+function_response\s+write_file denied$/m)
    })
  })

  describe('when a turn run with --yes is killed and resumed', () => {
    it('the continuation keeps permission mode allow: write_file runs and the file is written', async () => {
      const { dataDir, workspace, root } = await scratch()
      await crashedTurn({ dataDir, workspace, root, sessionId: 'yes', args: ['--yes'], flag: true })
      const script = await scriptFile(root, 'continue.json', [
        { toolCall: { name: 'write_file', args: { path: 'kept.txt', content: 'kept' } } },
        { text: 'done' },
      ])
      const resumed = await runCli(['resume', '--data-dir', dataDir, '--session', 'yes', '--script', script], {
        flag: true,
      })
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(existsSync(join(workspace, 'kept.txt'))).toBe(true)
      expect(await readFile(join(workspace, 'kept.txt'), 'utf8')).toBe('kept')
      expect(resumed.stderr.match(USING)?.slice(3)).toEqual(['allow', expect.stringMatching(/^recorded by run /)])
      const target = (await runHeaders(dataDir, 'yes')).find((h) => h['continuationSource'] !== undefined)
      expect(target?.['permissionMode']).toBe('allow')
      const rows = await ledgerRows(dataDir, 'yes', String(target?.['runId']))
      expect(
        rows
          .map(
            (r) =>
              (r['actions'] as { permissionDecision?: { decision: string } } | undefined)?.permissionDecision?.decision,
          )
          .filter(Boolean),
      ).toEqual(['allow'])
    })
  })

  describe('when a turn run without the resume flag is killed', () => {
    it('records its workspace identity, so resume continues it once the flag is on', async () => {
      const { dataDir, workspace, root } = await scratch()
      await crashedTurn({ dataDir, workspace, root, sessionId: 'noflag', flag: false })
      const [header] = await runHeaders(dataDir, 'noflag')
      expect(header?.['workspaceIdentity']).toEqual(expect.stringMatching(/^fs:\d+:\d+:\//))
      const script = await scriptFile(root, 'answer.json', [{ text: 'continued' }])
      const resumed = await runCli(['resume', '--data-dir', dataDir, '--session', 'noflag', '--script', script], {
        flag: true,
      })
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0)
      expect(resumed.stdout).toContain('continued')
      expect(resumed.stdout).not.toContain('workspace_identity_missing')
    })
  })

  describe('when a call is denied', () => {
    it('the model receives the denial wrapped once', async () => {
      const double = await endpoint(
        { toolCall: { id: 'call-w', name: 'write_file', args: '{"path":"x.txt","content":"x"}' } },
        { text: 'ok' },
      )
      const { dataDir, workspace } = await scratch()
      const result = await runCli(
        [
          'run',
          '--data-dir',
          dataDir,
          '--cwd',
          workspace,
          '--provider',
          'openai-compatible',
          '--base-url',
          double.baseUrl,
          '--model',
          'm',
          'write x',
        ],
        { env: { MAKA_API_KEY: 'test' } },
      )
      expect(result.code, result.stderr).toBe(0)
      const messages = double.requests[1]?.['messages'] as ReadonlyArray<Record<string, unknown>>
      expect(messages.find((m) => m['role'] === 'tool')?.['content']).toBe('{"error":"Permission denied."}')
    })
  })
})

describe('maka resume finds the crash', () => {
  describe('when an interrupted session is older than a completed one', () => {
    it('resumes the interrupted session of the current folder, and one of another folder saying so', async () => {
      const { dataDir, workspace, root } = await scratch()
      const other = join(root, 'other')
      await mkdir(other)
      await crashedTurn({ dataDir, workspace, root, sessionId: 'cut', flag: true, prompt: 'fix the\nflaky test' })
      const done = await runCli(['run', '--data-dir', dataDir, '--session', 'newer', '--cwd', workspace, 'hi'], {
        flag: true,
      })
      expect(done.code, done.stderr).toBe(0)
      const plan = await runCli(['resume', 'plan', '--json', '--data-dir', dataDir], { flag: true, cwd: workspace })
      expect(plan.code, plan.stderr).toBe(0)
      expect(JSON.parse(plan.stdout)).toMatchObject({ disposition: 'continue', continuation: { sessionId: 'cut' } })
      expect(plan.stderr).not.toContain('no interrupted session in this folder')
      // From another folder: the same session, with the line that says where it lives.
      const elsewhere = await runCli(['resume', 'plan', '--json', '--data-dir', dataDir], { flag: true, cwd: other })
      expect(JSON.parse(elsewhere.stdout)).toMatchObject({ continuation: { sessionId: 'cut' } })
      expect(elsewhere.stderr).toMatch(
        new RegExp(`^maka: no interrupted session in this folder; resuming cut "fix the flaky test" of .*ws\\.$`, 'm'),
      )
      const script = await scriptFile(root, 'answer.json', [{ text: 'continued' }])
      const resumed = await runCli(['resume', '--data-dir', dataDir, '--script', script], {
        flag: true,
        cwd: workspace,
      })
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(resumed.stdout).toContain('Resuming session cut')
    })
  })

  describe('when --pick runs without a terminal', () => {
    it('lists the interrupted sessions by title, age, folder and verdict, then exits 2 asking for --session', async () => {
      const { dataDir, workspace, root } = await scratch()
      await crashedTurn({ dataDir, workspace, root, sessionId: 'p1', flag: true, prompt: 'rename the module' })
      const listed = await runCli(['resume', '--pick', '--data-dir', dataDir], { flag: true, cwd: workspace })
      expect(listed.code).toBe(2)
      expect(listed.stdout).toMatch(/^ {2}rename the module · (just now|\d+ min ago) · .*ws · can continue \(p1\)$/m)
      expect(listed.stderr.trimEnd().split('\n')).toEqual([
        'maka: --pick needs a terminal to choose in; resume one of these with maka resume --session ID.',
      ])
      // Listing planned only: no continuation exists.
      expect((await runHeaders(dataDir, 'p1')).filter((h) => h['continuationSource'] !== undefined)).toEqual([])
    })
  })

  describe('when --pick runs on a terminal', () => {
    it('lists the interrupted sessions, and Enter on one resumes it', async () => {
      const { dataDir, workspace, root } = await scratch()
      await crashedTurn({ dataDir, workspace, root, sessionId: 'older', flag: true, prompt: 'first job' })
      await crashedTurn({ dataDir, workspace, root, sessionId: 'newer', flag: true, prompt: 'second job' })
      const socket = `maka-pick-${process.pid}`
      const tmux = (...args: ReadonlyArray<string>): string =>
        execFileSync('/usr/bin/tmux', ['-L', socket, ...args], { encoding: 'utf8' })
      const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', 'pick')
      const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`
      const command = [
        'env',
        'NO_COLOR=1',
        // CI variables set: ink would hide the list if the prompt let it see them.
        'CI=true',
        'MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1',
        quote(process.execPath),
        quote(CLI),
        'resume',
        '--pick',
        '--data-dir',
        quote(dataDir),
      ].join(' ')
      tmux(
        'new-session',
        '-d',
        '-s',
        'pick',
        '-x',
        '200',
        '-y',
        '30',
        `cd ${quote(workspace)}; ${command}; echo "exit=$?"; sleep 60`,
      )
      onTestFinished(() => {
        try {
          tmux('kill-server')
        } catch {
          // Already gone.
        }
        rmSync(tmuxSocketPath(socket), { force: true })
      })
      await waitFor('the list', () => screen().includes('Resume which interrupted session?'), 90_000)
      const list = screen()
      // Newest first: the second job is the first choice, then the first job.
      expect(list.indexOf('second job')).toBeGreaterThan(-1)
      expect(list.indexOf('second job')).toBeLessThan(list.indexOf('first job'))
      expect(list).toMatch(/first job · (just now|\d+ min ago) · .*ws · can continue \(older\)/)
      tmux('send-keys', '-t', 'pick', 'Down')
      await waitFor('the second choice selected', () => /❯ first job/.test(screen()), 90_000)
      tmux('send-keys', '-t', 'pick', 'Enter')
      await waitFor('the resume to end', () => /exit=\d+/.exec(screen())?.[0], 90_000)
      expect(screen()).toContain('exit=0')
      expect(screen()).toContain('Resuming session older')
      expect((await runHeaders(dataDir, 'older')).some((h) => h['continuationSource'] !== undefined)).toBe(true)
      expect((await runHeaders(dataDir, 'newer')).some((h) => h['continuationSource'] !== undefined)).toBe(false)
    }, 300_000)
  })

  describe('when sessions are listed', () => {
    it('each is titled by its first prompt, on one line', async () => {
      const { dataDir, workspace } = await scratch()
      await runCli(['run', '--data-dir', dataDir, '--session', 't', '--cwd', workspace, 'tidy\n  the   README'])
      const listed = await runCli(['sessions', '--data-dir', dataDir])
      expect(listed.stdout).toMatch(/^t {2}"tidy the README" {2}turn /m)
      const shown = await runCli(['show', 't', '--data-dir', dataDir])
      expect(shown.stdout.split('\n')[0]).toMatch(/^session t "tidy the README" \S+ /)
    })
  })
})
