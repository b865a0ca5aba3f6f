/**
 * `maka chat` as a day's work meets it, in a real pseudo-terminal (tmux): a reopened session shows
 * its earlier turns and offers to resume an interrupted one with one key; Esc and Ctrl+C cancel a
 * running turn and keep the chat (the spinner goes away, the ledger records the cancel); Ctrl+C on
 * an idle prompt clears a typed line, then leaves; Ctrl+D on an empty line and `/exit` leave; the
 * line is edited with the cursor, Ctrl+U and the history; a pasted block of lines is one message;
 * tool lines show what ran and a preview of its output; a status line names the model, the folder
 * and the permission mode; long answers wrap at word boundaries; `/resume` with nothing to continue
 * here lists the interrupted sessions of the data directory and resumes the one picked by number.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  interruptedSession,
  ledgerRows,
  removeScratch,
  runCli,
  runHeaders,
  scratch,
  scriptFile,
  tmuxChat,
  waitFor,
} from './support.js'

const chat = tmuxChat('daily', { columns: 100, rows: 45 })
const { screen, keys, press, type } = chat

const exitCode = async (): Promise<number> =>
  Number((await waitFor('the exit line', () => /exit=(\d+)/.exec(screen()) ?? undefined, 60_000))[1])

// A run folder appears before its run.json is linked, so a header may be missing for a moment.
const headersNow = async (dataDir: string, sessionId: string): Promise<ReadonlyArray<Record<string, unknown>>> => {
  try {
    return await runHeaders(dataDir, sessionId)
  } catch {
    return []
  }
}

const byCreation = (headers: ReadonlyArray<Record<string, unknown>>) =>
  [...headers].sort((a, b) => (String(a['createdAt']) < String(b['createdAt']) ? -1 : 1))

const userTexts = async (dataDir: string, sessionId: string): Promise<ReadonlyArray<string>> => {
  const texts: Array<string> = []
  for (const header of byCreation(await runHeaders(dataDir, sessionId))) {
    for (const row of await ledgerRows(dataDir, sessionId, String(header['runId']))) {
      const content = row['content'] as { kind: string; text?: string } | undefined
      if (row['role'] === 'user' && content?.kind === 'text') texts.push(String(content.text))
    }
  }
  return texts
}

const terminalsOf = (rows: ReadonlyArray<Record<string, unknown>>) =>
  rows.filter((row) => (row['actions'] as Record<string, unknown> | undefined)?.['endInvocation'] === true)

// The line under the transcript that holds what is being typed.
const promptLine = (): string => {
  const lines = screen().split('\n')
  for (let i = lines.length - 1; i >= 0; i -= 1) if (lines[i]?.startsWith('› ') === true) return lines[i] ?? ''
  return ''
}

describe('maka chat for a day of work', { timeout: 180_000 }, () => {
  let env: Awaited<ReturnType<typeof scratch>>
  let slow = ''
  let ok = ''

  beforeAll(async () => {
    env = await scratch()
    slow = await scriptFile(env.root, 'slow.json', [{ delayMs: 600_000 }, { text: 'never said' }])
    ok = await scriptFile(env.root, 'ok.json', [{ text: 'Noted.' }])
  })

  afterEach(chat.close)

  afterAll(removeScratch)

  const waitRunning = (sessionId: string) =>
    waitFor(
      'the run to be running',
      async () => (await headersNow(env.dataDir, sessionId)).some((h) => h['status'] === 'running'),
      60_000,
    )

  const expectCancelledOnce = async (sessionId: string, runId: string) => {
    const header = (await runHeaders(env.dataDir, sessionId)).find((h) => h['runId'] === runId)
    expect(header).toMatchObject({ status: 'cancelled', failureClass: 'user_interrupted' })
    const rows = await ledgerRows(env.dataDir, sessionId, runId)
    const terminals = terminalsOf(rows)
    expect(terminals).toHaveLength(1)
    expect(rows[rows.length - 1]).toEqual(terminals[0])
  }

  describe('when a session with earlier turns is reopened', () => {
    it('shows its transcript with what each tool ran and printed, and a status line', async () => {
      const script = await scriptFile(env.root, 'earlier.json', [
        { toolCall: { name: 'shell', args: { command: "printf 'first-out\\nsecond-out\\n'" } } },
        { text: 'The listing is done.' },
      ])
      const ran = await runCli(
        [
          'run',
          '--data-dir',
          env.dataDir,
          '--session',
          'again',
          '--cwd',
          env.workspace,
          '--script',
          script,
          '--yes',
          'list it please',
        ],
        { flag: true },
      )
      expect(ran.code).toBe(0)

      await chat.open(['--data-dir', env.dataDir, '--session', 'again', '--cwd', env.workspace], true)
      await waitFor('the earlier answer', () => screen().includes('maka › The listing is done.'), 60_000)
      const text = screen()
      expect(text).toContain('you › list it please')
      expect(text).toMatch(/⚙ shell\s+\$ printf 'first-out\\nsecond-out\\n'/)
      expect(text).toContain('│ first-out')
      expect(text).toContain('│ second-out')
      expect(text).not.toContain('Interrupted turn found')
      // The status line: model, folder, permission mode — the mode the session's turn recorded (`--yes`).
      expect(text).toMatch(
        new RegExp(`scripted · ${env.workspace.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} · allow mode`),
      )
    })
  })

  describe('when the reopened session has an interrupted turn', () => {
    it('offers to resume it, and y continues it through the runtime resume', async () => {
      await interruptedSession(env.dataDir, env.workspace, 'crashed', env.root)
      const cont = await scriptFile(env.root, 'cont.json', [{ text: 'Picked up where it stopped.' }])
      await chat.open(
        ['--data-dir', env.dataDir, '--session', 'crashed', '--cwd', env.workspace, '--script', cont],
        true,
      )
      await waitFor('the offer', () => screen().includes('Interrupted turn found'), 60_000)
      // The transcript of the interrupted turn is shown above the offer.
      expect(screen()).toContain('you › list the files')
      expect(screen()).toContain('✓ list_dir ok')
      keys('y')
      await waitFor('the resume notice', () => screen().includes('Resuming from the latest safe boundary'), 60_000)
      await waitFor('the continuation', () => screen().includes('maka › Picked up where it stopped.'), 60_000)
      const headers = await waitFor(
        'the terminal header of the continuation',
        async () => {
          const all = await headersNow(env.dataDir, 'crashed')
          return all.some((h) => h['continuationSource'] !== undefined && h['status'] === 'completed') ? all : undefined
        },
        60_000,
      )
      expect(headers).toHaveLength(2)
      // No prompt was sent again: only the first run has the user's message.
      expect(await userTexts(env.dataDir, 'crashed')).toEqual(['list the files'])
    })

    it('n leaves it for /resume', async () => {
      await interruptedSession(env.dataDir, env.workspace, 'later', env.root)
      await chat.open(['--data-dir', env.dataDir, '--session', 'later', '--cwd', env.workspace], true)
      await waitFor('the offer', () => screen().includes('Interrupted turn found'), 60_000)
      keys('n')
      await waitFor('the refusal', () => screen().includes('Not resumed; /resume continues it later.'), 60_000)
      expect(await headersNow(env.dataDir, 'later')).toHaveLength(1)
    })
  })

  describe('when this session has nothing interrupted but another session has', () => {
    it('/resume lists it with title, age, folder and verdict; a number picks it and resumes it', async () => {
      const here = await scratch()
      await interruptedSession(here.dataDir, here.workspace, 'elsewhere', here.root)
      const hello = await runCli(
        ['run', '--data-dir', here.dataDir, '--session', 'current', '--cwd', here.workspace, '--script', ok, 'hello'],
        { flag: true },
      )
      expect(hello.code).toBe(0)
      const cont = await scriptFile(here.root, 'pick-cont.json', [{ text: 'Finished from the pick.' }])
      await chat.open(
        ['--data-dir', here.dataDir, '--session', 'current', '--cwd', here.workspace, '--script', cont],
        true,
      )
      await waitFor('the reopened transcript', () => screen().includes('you › hello'), 60_000)

      // `/resume list` shows the list whatever this session holds; Esc picks none.
      type('/resume list')
      await waitFor('the list', () => screen().includes('Interrupted sessions, newest first'), 60_000)
      press('Escape')
      await waitFor('no pick', () => screen().includes('No session picked.'), 60_000)
      await waitFor('the list to go', () => !screen().includes('Interrupted sessions, newest first'), 60_000)
      expect(await headersNow(here.dataDir, 'elsewhere')).toHaveLength(1)

      // `/resume` here has nothing to continue, so it lists the interrupted session of the data dir.
      type('/resume')
      await waitFor('the list', () => screen().includes('Interrupted sessions, newest first'), 60_000)
      expect(screen()).toMatch(/1\. list the files · (just now|\d+ min ago) · \S*\/ws · can continue \(elsewhere\)/)
      expect(screen()).not.toContain('(current)')
      type('1')
      await waitFor('the resume notice', () => screen().includes('Resuming from the latest safe boundary'), 60_000)
      await waitFor('the continuation', () => screen().includes('maka › Finished from the pick.'), 60_000)
      await waitFor('the end of the continuation', () => /ended: completed/.test(screen()), 60_000)
      const headers = await waitFor(
        'the terminal header of the continuation',
        async () => {
          const all = await headersNow(here.dataDir, 'elsewhere')
          return all.some((h) => h['continuationSource'] !== undefined && h['status'] === 'completed') ? all : undefined
        },
        60_000,
      )
      expect(headers).toHaveLength(2)
      // No prompt was sent again, and the chat's first session was not touched.
      expect(await userTexts(here.dataDir, 'elsewhere')).toEqual(['list the files'])
      expect(await headersNow(here.dataDir, 'current')).toHaveLength(1)
    })
  })

  describe('when Esc or Ctrl+C is pressed during a turn', () => {
    it('cancels the turn, keeps the chat open without a spinner, and Ctrl+C on an idle prompt leaves', async () => {
      await chat.open(['--data-dir', env.dataDir, '--session', 'esc', '--cwd', env.workspace, '--script', slow], true)
      type('wait for me')
      await waitRunning('esc')
      press('Escape')
      await waitFor('the cancel', () => screen().includes('ended: cancelled (user_interrupted)'), 60_000)
      await waitFor('the chat to stay', () => screen().includes('Turn cancelled; the chat stays open'), 60_000)
      expect(screen()).not.toContain('The model is working')
      expect(screen()).not.toContain('Cancelling run')
      expect(screen()).not.toMatch(/exit=\d+/)
      const [first] = await runHeaders(env.dataDir, 'esc')
      await expectCancelledOnce('esc', String(first?.['runId']))
      expect(existsSync(join(env.dataDir, 'sessions', 'esc', 'owner.lock'))).toBe(false)

      // Ctrl+C cancels a second turn the same way.
      type('wait again')
      await waitFor(
        'the second run',
        async () => (await headersNow(env.dataDir, 'esc')).some((h) => h['status'] === 'running'),
        60_000,
      )
      press('C-c')
      await waitFor(
        'the second cancel',
        async () => (await headersNow(env.dataDir, 'esc')).filter((h) => h['status'] === 'cancelled').length === 2,
        60_000,
      )
      await waitFor('the spinner to go', () => !screen().includes('The model is working'), 60_000)
      const second = byCreation(await runHeaders(env.dataDir, 'esc'))[1]
      await expectCancelledOnce('esc', String(second?.['runId']))

      // On an idle prompt, the first Ctrl+C clears a typed line and the next one leaves.
      keys('half typed')
      await waitFor('the typed line', () => promptLine().includes('half typed'), 60_000)
      press('C-c')
      await waitFor('the cleared line', () => !promptLine().includes('half typed'), 60_000)
      expect(screen()).not.toMatch(/exit=\d+/)
      press('C-c')
      expect(await exitCode()).toBe(0)
    })
  })

  describe('when a line is edited', () => {
    it('moves the cursor, clears with Ctrl+U, walks the history and sends a pasted block as one message', async () => {
      await chat.open(['--data-dir', env.dataDir, '--session', 'edit', '--cwd', env.workspace, '--script', ok], true)
      // Cursor movement: "helo" → Left → "l" gives "hello"; Home then "> " prefixes it.
      keys('helo wrld')
      press('Left', 'Left', 'Left', 'Left', 'Left', 'Left')
      keys('l')
      press('End', 'Left', 'Left', 'Left')
      keys('o')
      press('Home')
      keys('say ')
      await waitFor('the edited line', () => promptLine().includes('say hello world'), 60_000)
      press('Enter')
      await waitFor(
        'the first turn',
        async () => (await headersNow(env.dataDir, 'edit')).filter((h) => h['status'] === 'completed').length === 1,
        60_000,
      )
      // Ctrl+U deletes what is left of the cursor.
      keys('throw this away')
      press('C-u')
      await waitFor('the emptied line', () => !promptLine().includes('throw'), 60_000)
      // Up recalls the last prompt, which is sent again.
      press('Up')
      await waitFor('the recalled prompt', () => promptLine().includes('say hello world'), 60_000)
      press('Enter')
      await waitFor(
        'the second turn',
        async () => (await headersNow(env.dataDir, 'edit')).filter((h) => h['status'] === 'completed').length === 2,
        60_000,
      )
      // A pasted block of lines stays one message, sent with Enter.
      chat.paste('first pasted line\nsecond pasted line')
      await waitFor('the pasted text', () => screen().includes('second pasted line'), 60_000)
      expect(await headersNow(env.dataDir, 'edit')).toHaveLength(2)
      press('Enter')
      await waitFor(
        'the third turn',
        async () => (await headersNow(env.dataDir, 'edit')).filter((h) => h['status'] === 'completed').length === 3,
        60_000,
      )
      expect(await userTexts(env.dataDir, 'edit')).toEqual([
        'say hello world',
        'say hello world',
        'first pasted line\nsecond pasted line',
      ])
      // Ctrl+D on an empty line leaves.
      press('C-d')
      expect(await exitCode()).toBe(0)
    })

    it('/exit leaves', async () => {
      await chat.open(['--data-dir', env.dataDir, '--session', 'bye', '--cwd', env.workspace], true)
      type('/exit')
      expect(await exitCode()).toBe(0)
    })
  })

  describe('when an answer is longer than the terminal is wide', () => {
    it('wraps it at word boundaries', async () => {
      const words =
        'This is a fairly long answer that should wrap at word boundaries when the terminal is narrow enough to force wrapping of these words, again and again, until every row of it has been broken somewhere.'
      const script = await scriptFile(env.root, 'long.json', [{ text: words }])
      const narrow = tmuxChat('narrow', { columns: 60, rows: 40 })
      try {
        await narrow.open(
          ['--data-dir', env.dataDir, '--session', 'wrap', '--cwd', env.workspace, '--script', script],
          true,
        )
        narrow.type('talk')
        await waitFor('the answer', () => narrow.screen().includes('broken somewhere.'), 60_000)
        const rows = narrow.rows()
        const start = rows.findIndex((row) => row.includes('This is a fairly'))
        expect(start).toBeGreaterThanOrEqual(0)
        const shown = rows.slice(start, start + 6).join(' ')
        // Every word is whole on some row: no row of the answer breaks a word.
        const rowWords = new Set(shown.split(/\s+/))
        for (const word of words.split(/\s+/)) expect(rowWords, word).toContain(word)
      } finally {
        narrow.close()
      }
    })
  })
})
