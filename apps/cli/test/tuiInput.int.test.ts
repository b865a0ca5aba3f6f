/**
 * `maka chat` in a real pseudo-terminal (tmux): SIGINT cancels the running turn durably and leaves
 * with 130, the Ctrl+C key cancels it the same way and keeps the chat, two signals leave a run for recovery; backspace edits the line; lines typed
 * while a turn runs are queued in order; the permission prompt shows what will happen (the path) in
 * the terminal only, and a denied call reads as denied; `/plan` and `/resume` in a session with no
 * run park with `resume_candidate_missing`, like `maka resume plan` on an empty data dir.
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ParkReasonSentences } from '@maka/events'
import { ledgerRows, removeScratch, runCli, runHeaders, scratch, scriptFile, tmuxChat, waitFor } from './support.js'

const chat = tmuxChat('input', { columns: 150, rows: 50 })
const { screen, keys, press, type } = chat
const openChat = (args: ReadonlyArray<string>, flag = true, extraEnv: ReadonlyArray<string> = []) =>
  chat.open(args, flag, extraEnv)

const exitCode = async (): Promise<number> =>
  Number((await waitFor('the exit line', () => /exit=(\d+)/.exec(screen()) ?? undefined, 30_000))[1])

const ownerPid = async (dataDir: string, sessionId: string): Promise<number> => {
  const path = join(dataDir, 'sessions', sessionId, 'owner.lock')
  await waitFor('the owner lock', () => existsSync(path), 30_000)
  return (JSON.parse(await readFile(path, 'utf8')) as { pid: number }).pid
}

// A run folder appears before its run.json is linked, so a header may be missing for a moment.
const headersNow = async (dataDir: string, sessionId: string): Promise<ReadonlyArray<Record<string, unknown>>> => {
  try {
    return await runHeaders(dataDir, sessionId)
  } catch {
    return []
  }
}

const waitRunning = (dataDir: string, sessionId: string) =>
  waitFor(
    'the run to be running',
    async () => (await headersNow(dataDir, sessionId)).some((h) => h['status'] === 'running'),
    30_000,
  )

const terminalsOf = (rows: ReadonlyArray<Record<string, unknown>>) =>
  rows.filter((row) => (row['actions'] as Record<string, unknown> | undefined)?.['endInvocation'] === true)

const userTexts = async (dataDir: string, sessionId: string): Promise<ReadonlyArray<string>> => {
  const headers = [...(await runHeaders(dataDir, sessionId))].sort((a, b) =>
    String(a['createdAt']) < String(b['createdAt']) ? -1 : 1,
  )
  const texts: Array<string> = []
  for (const header of headers) {
    for (const row of await ledgerRows(dataDir, sessionId, String(header['runId']))) {
      const content = row['content'] as { kind: string; text?: string } | undefined
      if (row['role'] === 'user' && content?.kind === 'text') texts.push(String(content.text))
    }
  }
  return texts
}

describe('maka chat input and interrupts in a terminal', { timeout: 120_000 }, () => {
  let env: Awaited<ReturnType<typeof scratch>>
  let slow = ''

  beforeAll(async () => {
    env = await scratch()
    slow = await scriptFile(env.root, 'slow.json', [{ delayMs: 600_000 }, { text: 'never said' }])
  })

  afterEach(chat.close)

  afterAll(removeScratch)

  const expectCancelled = async (sessionId: string) => {
    const [header] = await runHeaders(env.dataDir, sessionId)
    expect(header).toMatchObject({ status: 'cancelled', failureClass: 'user_interrupted' })
    const rows = await ledgerRows(env.dataDir, sessionId, String(header?.['runId']))
    const terminals = terminalsOf(rows)
    expect(terminals).toHaveLength(1)
    expect(rows[rows.length - 1]).toEqual(terminals[0])
    expect(existsSync(join(env.dataDir, 'sessions', sessionId, 'owner.lock'))).toBe(false)
  }

  describe('when the chat process gets SIGINT during a turn', () => {
    it('cancels the turn durably, releases the lock and exits 130', async () => {
      await openChat(['--data-dir', env.dataDir, '--session', 'csig', '--cwd', env.workspace, '--script', slow])
      type('wait for me')
      const pid = await ownerPid(env.dataDir, 'csig')
      await waitRunning(env.dataDir, 'csig')
      process.kill(pid, 'SIGINT')

      expect(await exitCode()).toBe(130)
      expect(screen()).toMatch(/maka: interrupted; run run-\w+ cancelled/)
      await expectCancelled('csig')
    })
  })

  describe('when Ctrl+C is pressed during a turn', () => {
    // Issue 24: the key cancels the turn the same durable way but keeps the chat open (decision 216);
    // a signal from outside still leaves with 130 (above).
    it('cancels the turn the same way and keeps the chat; Ctrl+C on the idle prompt then leaves with 0', async () => {
      await openChat(['--data-dir', env.dataDir, '--session', 'ckey', '--cwd', env.workspace, '--script', slow])
      type('wait for me')
      await ownerPid(env.dataDir, 'ckey')
      await waitRunning(env.dataDir, 'ckey')
      press('C-c')

      await waitFor('the cancel', () => screen().includes('ended: cancelled (user_interrupted)'), 30_000)
      await waitFor(
        'the header',
        async () => (await headersNow(env.dataDir, 'ckey')).some((h) => h['status'] === 'cancelled'),
        30_000,
      )
      await waitFor('the lock to go', () => !existsSync(join(env.dataDir, 'sessions', 'ckey', 'owner.lock')), 30_000)
      await expectCancelled('ckey')
      expect(screen()).not.toMatch(/exit=\d+/)
      press('C-c')
      expect(await exitCode()).toBe(0)
    })
  })

  describe('when the chat process gets two signals together', () => {
    it('exits at once and leaves a run that recovery closes as app_restarted', async () => {
      await openChat(['--data-dir', env.dataDir, '--session', 'ctwice', '--cwd', env.workspace, '--script', slow])
      type('wait for me')
      const pid = await ownerPid(env.dataDir, 'ctwice')
      await waitRunning(env.dataDir, 'ctwice')
      // SIGINT twice while pending would merge into one; stopped, the process sees both together.
      process.kill(pid, 'SIGSTOP')
      process.kill(pid, 'SIGINT')
      process.kill(pid, 'SIGTERM')
      process.kill(pid, 'SIGCONT')

      expect([130, 143]).toContain(await exitCode())
      const [header] = await runHeaders(env.dataDir, 'ctwice')
      expect(header?.['status']).toBe('running')
      const recovered = await runCli(['recover', '--data-dir', env.dataDir])
      expect(recovered.code).toBe(0)
      const [after] = await runHeaders(env.dataDir, 'ctwice')
      expect(after).toMatchObject({ status: 'failed', failureClass: 'app_restarted' })
    })
  })

  describe('when keys are typed', () => {
    it('backspace deletes, and lines typed while a turn runs are queued in order', async () => {
      const pause = await scriptFile(env.root, 'pause.json', [{ delayMs: 1500 }, { text: 'Done.' }])
      await openChat(['--data-dir', env.dataDir, '--session', 'keys', '--cwd', env.workspace, '--script', pause])
      // A backspace as its own key, and one inside a chunk of typed text.
      keys('firsx')
      press('BSpace')
      keys('t')
      press('Enter')
      await waitFor('the first turn to run', () => screen().includes('The model is working'), 30_000)
      keys('secondd\u007f')
      press('Enter')
      type('third')
      await waitFor('the queued lines', () => screen().includes('queued › third'), 30_000)

      await waitFor(
        'three finished turns',
        async () => (await headersNow(env.dataDir, 'keys')).filter((h) => h['status'] === 'completed').length === 3,
        60_000,
      )
      expect(await userTexts(env.dataDir, 'keys')).toEqual(['first', 'second', 'third'])
      const all = JSON.stringify(await userTexts(env.dataDir, 'keys'))
      expect(all).not.toContain('\\u007f')
    })
  })

  describe('when a tool call asks for permission', () => {
    // CI variables set: ink would hide its live frame, and with it the prompt, if the chat let it see them.
    it('shows the path in the prompt only, and a denial reads as denied', async () => {
      const write = await scriptFile(env.root, 'write.json', [
        { toolCall: { name: 'write_file', args: { path: 'preview-target.txt', content: 'abc' } } },
        { text: 'Finished.' },
      ])
      await openChat(
        ['--data-dir', env.dataDir, '--session', 'perm', '--cwd', env.workspace, '--script', write],
        true,
        ['CI=true', 'CI_JOB_ID=1'],
      )
      type('write it')
      await waitFor('the prompt', () => screen().includes('Allow write_file: write preview-target.txt (3 bytes)'))
      keys('n')
      await waitFor('the end of the turn', () => screen().includes('ended: completed'), 30_000)

      const text = screen()
      expect(text).toContain('permission denied')
      expect(text).toContain('✗ write_file denied — the tool did not run')
      expect(existsSync(join(env.workspace, 'preview-target.txt'))).toBe(false)
      const [header] = await runHeaders(env.dataDir, 'perm')
      const rows = await ledgerRows(env.dataDir, 'perm', String(header?.['runId']))
      const permissionRows = rows.filter(
        (r) =>
          (r['actions'] as Record<string, unknown> | undefined)?.['permissionRequest'] ??
          (r['actions'] as Record<string, unknown> | undefined)?.['permissionDecision'],
      )
      expect(permissionRows).toHaveLength(2)
      expect(JSON.stringify(permissionRows)).not.toContain('preview-target')
      const shown = await runCli(['show', 'perm', '--data-dir', env.dataDir])
      expect(shown.stdout).toMatch(/function_response\s+write_file denied/)
    })
  })

  describe('when the session has no run yet', () => {
    it('/plan and /resume park with resume_candidate_missing, like resume plan on an empty data dir', async () => {
      const empty = await scratch()
      const cli = await runCli(['resume', 'plan', '--data-dir', empty.dataDir, '--json'], { flag: true })
      expect(cli.code).toBe(3)
      expect(JSON.parse(cli.stdout)).toMatchObject({
        disposition: 'park',
        rejectionReasons: ['resume_candidate_missing'],
      })

      await openChat(['--data-dir', empty.dataDir, '--session', 'fresh', '--cwd', empty.workspace])
      type('/plan')
      await waitFor('the plan', () => screen().includes('park'))
      type('/resume')
      await waitFor('the park', () => screen().includes('Cannot resume:'))
      const text = screen()
      expect(text.split(ParkReasonSentences.resume_candidate_missing).length - 1).toBe(2)
      expect(text).toContain('(resume_candidate_missing)')
    })
  })
})
